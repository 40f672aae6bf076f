package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/internal/blob"
)

var _ inbox.Store = (*Store)(nil)

const deliveryColumns = `id, event, action, key, payload, status, attempts, received_at, next_attempt_at, lease_until, done_at, last_error`

func scanDelivery(row scanner) (*inbox.Delivery, error) {
	var d inbox.Delivery
	var status, received, next string
	var lease, done sql.NullString
	if err := row.Scan(&d.ID, &d.Event, &d.Action, &d.Key, &d.Payload, &status, &d.Attempts, &received, &next, &lease, &done, &d.LastError); err != nil {
		return nil, err
	}
	d.Status = inbox.Status(status)
	payload, err := blob.Decompress(d.Payload)
	if err != nil {
		return nil, err
	}
	d.Payload = payload
	for _, t := range []struct {
		dst *time.Time
		src string
	}{{&d.ReceivedAt, received}, {&d.NextAttempt, next}, {&d.LeaseUntil, lease.String}, {&d.DoneAt, done.String}} {
		v, err := parseTime(t.src)
		if err != nil {
			return nil, err
		}
		*t.dst = v
	}
	return &d, nil
}

// EnqueueDelivery stores a new delivery, or requeues a dead one.
func (s *Store) EnqueueDelivery(ctx context.Context, d *inbox.Delivery) (_ inbox.Status, fresh bool, err error) {
	defer wrap(&err, "EnqueueDelivery %s", d.ID)
	at := formatTime(d.ReceivedAt)
	// One statement in the common case (a new delivery), so the
	// acknowledgement waits for one write.
	res, err := s.exec(ctx, `INSERT INTO deliveries (id, event, action, key, payload, status, received_at, next_attempt_at)
		VALUES (?, ?, ?, ?, ?, 'pending', ?, ?) ON CONFLICT (id) DO NOTHING`, d.ID, d.Event, d.Action, d.Key, blob.Compress(d.Payload), at, at)
	if err != nil {
		return "", false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return inbox.Pending, true, nil
	}
	// Known: a dead one is queued again, anything else stays as it is.
	res, err = s.exec(ctx, `UPDATE deliveries SET status = 'pending', attempts = 0, next_attempt_at = ?, lease_until = NULL
		WHERE id = ? AND status = 'dead'`, at, d.ID)
	if err != nil {
		return "", false, err
	}
	if n, _ := res.RowsAffected(); n == 1 {
		return inbox.Pending, true, nil
	}
	var status string
	if err := s.queryRow(ctx, "SELECT status FROM deliveries WHERE id = ?", d.ID).Scan(&status); err != nil {
		return "", false, err
	}
	return inbox.Status(status), false, nil
}

// Delivery returns a delivery.
func (s *Store) Delivery(ctx context.Context, id string) (_ *inbox.Delivery, err error) {
	defer wrap(&err, "Delivery %s", id)
	return scanDelivery(s.queryRow(ctx, "SELECT "+deliveryColumns+" FROM deliveries WHERE id = ?", id))
}

// ClaimDelivery leases the oldest due delivery whose key is free. Writers
// are serialised, so no two claims see the same free key.
func (s *Store) ClaimDelivery(ctx context.Context, now, lease time.Time) (_ *inbox.Delivery, err error) {
	defer wrap(&err, "ClaimDelivery")
	n := formatTime(now)
	row, unlock := s.writeRow(ctx, `UPDATE deliveries SET status = 'processing', lease_until = ?, attempts = attempts + 1
		WHERE id = (SELECT d.id FROM deliveries d
			WHERE ((d.status = 'pending' AND d.next_attempt_at <= ?) OR (d.status = 'processing' AND d.lease_until <= ?))
			  AND (d.key = '' OR NOT EXISTS (SELECT 1 FROM deliveries p
				WHERE p.key = d.key AND p.id <> d.id AND p.status = 'processing' AND p.lease_until > ?))
			ORDER BY d.next_attempt_at, d.received_at, d.id LIMIT 1)
		RETURNING `+deliveryColumns, formatTime(lease), n, n, n)
	defer unlock()
	return scanDelivery(row)
}

func (s *Store) moveDelivery(ctx context.Context, id, set string, args ...any) error {
	res, err := s.exec(ctx, "UPDATE deliveries SET "+set+" WHERE id = ? AND status = 'processing'", append(args, id)...)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("delivery %s is not processing: %w", id, registry.ErrConflict)
	}
	return nil
}

// CompleteDelivery marks a processing delivery done.
func (s *Store) CompleteDelivery(ctx context.Context, id string, at time.Time) (err error) {
	defer wrap(&err, "CompleteDelivery %s", id)
	return s.moveDelivery(ctx, id, "status = 'done', done_at = ?, lease_until = NULL, last_error = ''", formatTime(at))
}

// RetryDelivery returns a processing delivery to the queue.
func (s *Store) RetryDelivery(ctx context.Context, id string, next time.Time, reason string) (err error) {
	defer wrap(&err, "RetryDelivery %s", id)
	return s.moveDelivery(ctx, id, "status = 'pending', next_attempt_at = ?, lease_until = NULL, last_error = ?", formatTime(next), reason)
}

// KillDelivery gives up on a processing delivery.
func (s *Store) KillDelivery(ctx context.Context, id string, reason string, at time.Time) (err error) {
	defer wrap(&err, "KillDelivery %s", id)
	return s.moveDelivery(ctx, id, "status = 'dead', done_at = ?, lease_until = NULL, last_error = ?", formatTime(at), reason)
}

// DeliveryStats counts deliveries by status.
func (s *Store) DeliveryStats(ctx context.Context) (_ inbox.Stats, err error) {
	defer wrap(&err, "DeliveryStats")
	var st inbox.Stats
	var oldest sql.NullString
	err = s.queryRow(ctx, `SELECT
		COALESCE(SUM(status = 'pending'), 0), COALESCE(SUM(status = 'processing'), 0),
		COALESCE(SUM(status = 'done'), 0), COALESCE(SUM(status = 'dead'), 0),
		MIN(CASE WHEN status = 'pending' THEN received_at END) FROM deliveries`).
		Scan(&st.Pending, &st.Processing, &st.Done, &st.Dead, &oldest)
	if err != nil {
		return st, err
	}
	st.OldestPending, err = parseTime(oldest.String)
	return st, err
}

// PruneDeliveries deletes done deliveries finished before t.
func (s *Store) PruneDeliveries(ctx context.Context, before time.Time) (_ int, err error) {
	defer wrap(&err, "PruneDeliveries")
	res, err := s.exec(ctx, "DELETE FROM deliveries WHERE status = 'done' AND done_at < ?", formatTime(before))
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}

// RepositoryEpoch counts the deactivations of repositories so far.
func (s *Store) RepositoryEpoch(ctx context.Context) (_ int64, err error) {
	defer wrap(&err, "RepositoryEpoch")
	var epoch int64
	err = s.queryRow(ctx, "SELECT epoch FROM github_repository_epoch WHERE id = 1").Scan(&epoch)
	return epoch, err
}

// PutRepository adds or updates a repository unless the epoch moved past
// epoch: one statement, so no deactivation slips between
// the comparison and the write.
func (s *Store) PutRepository(ctx context.Context, r *inbox.Repository, epoch int64) (err error) {
	defer wrap(&err, "PutRepository %s", r.FullName)
	res, err := s.exec(ctx, `INSERT INTO github_repositories (id, installation_id, full_name, default_branch, clone_url, active, updated_at)
		SELECT ?, ?, ?, ?, ?, 1, ?
		WHERE (SELECT epoch FROM github_repository_epoch WHERE id = 1) = ?
		ON CONFLICT (id) DO UPDATE SET installation_id = excluded.installation_id,
		full_name = excluded.full_name, active = 1, updated_at = excluded.updated_at,
		default_branch = CASE WHEN excluded.default_branch = '' THEN github_repositories.default_branch ELSE excluded.default_branch END,
		clone_url = CASE WHEN excluded.clone_url = '' THEN github_repositories.clone_url ELSE excluded.clone_url END`,
		r.ID, r.InstallationID, r.FullName, r.DefaultBranch, r.CloneURL, formatTime(r.UpdatedAt), epoch)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("a repository was removed since epoch %d: %w", epoch, registry.ErrConflict)
	}
	return nil
}

// DeactivateRepositories moves the epoch on, then marks
// repositories inactive: a write under the old epoch fails from the first
// statement on, and a listing read under the new one is newer than the
// removal.
func (s *Store) DeactivateRepositories(ctx context.Context, installationID int64, ids []int64, at time.Time) (err error) {
	defer wrap(&err, "DeactivateRepositories")
	if _, err := s.exec(ctx, "UPDATE github_repository_epoch SET epoch = epoch + 1 WHERE id = 1"); err != nil {
		return err
	}
	if len(ids) == 0 {
		_, err = s.exec(ctx, "UPDATE github_repositories SET active = 0, updated_at = ? WHERE installation_id = ?", formatTime(at), installationID)
		return err
	}
	args := []any{formatTime(at), installationID}
	for _, id := range ids {
		args = append(args, id)
	}
	_, err = s.exec(ctx, "UPDATE github_repositories SET active = 0, updated_at = ? WHERE installation_id = ? AND id IN ("+placeholders(len(ids))+")", args...)
	return err
}

// Repositories lists the active repositories by name.
func (s *Store) Repositories(ctx context.Context) (_ []*inbox.Repository, err error) {
	defer wrap(&err, "Repositories")
	rows, err := s.query(ctx, `SELECT id, installation_id, full_name, default_branch, clone_url, active, updated_at
		FROM github_repositories WHERE active = 1 ORDER BY full_name`)
	return collect(rows, err, func(row scanner) (*inbox.Repository, error) {
		var r inbox.Repository
		var updated string
		if err := row.Scan(&r.ID, &r.InstallationID, &r.FullName, &r.DefaultBranch, &r.CloneURL, &r.Active, &updated); err != nil {
			return nil, err
		}
		r.UpdatedAt, err = parseTime(updated)
		return &r, err
	})
}
