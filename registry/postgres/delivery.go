package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/internal/blob"
)

var _ inbox.Store = (*Store)(nil)

const deliveryColumns = `id, event, action, key, payload, status, attempts, received_at, next_attempt_at, lease_until, done_at, last_error`

func scanDelivery(row pgx.Row) (*inbox.Delivery, error) {
	var d inbox.Delivery
	var status string
	var lease, done *time.Time
	if err := row.Scan(&d.ID, &d.Event, &d.Action, &d.Key, &d.Payload, &status, &d.Attempts, &d.ReceivedAt, &d.NextAttempt,
		&lease, &done, &d.LastError); err != nil {
		return nil, err
	}
	d.Status = inbox.Status(status)
	payload, err := blob.Decompress(d.Payload)
	if err != nil {
		return nil, err
	}
	d.Payload = payload
	d.ReceivedAt, d.NextAttempt = d.ReceivedAt.UTC(), d.NextAttempt.UTC()
	if lease != nil {
		d.LeaseUntil = lease.UTC()
	}
	if done != nil {
		d.DoneAt = done.UTC()
	}
	return &d, nil
}

// EnqueueDelivery stores a new delivery, or requeues a dead one, in one
// statement.
func (s *Store) EnqueueDelivery(ctx context.Context, d *inbox.Delivery) (_ inbox.Status, fresh bool, err error) {
	defer wrap(&err, "EnqueueDelivery %s", d.ID)
	var status string
	var inserted bool
	err = s.pool.QueryRow(ctx, `INSERT INTO deliveries AS x (id, event, action, key, payload, status, received_at, next_attempt_at)
		VALUES ($1, $2, $3, $4, $5, 'pending', $6, $6)
		ON CONFLICT (id) DO UPDATE SET status = 'pending', attempts = 0, next_attempt_at = $6, lease_until = NULL
			WHERE x.status = 'dead'
		RETURNING status, (xmax = 0)`, d.ID, d.Event, d.Action, d.Key, blob.Compress(d.Payload), d.ReceivedAt).Scan(&status, &inserted)
	if errors.Is(err, pgx.ErrNoRows) {
		// The id is known and not dead: leave it as it is.
		if err := s.pool.QueryRow(ctx, "SELECT status FROM deliveries WHERE id = $1", d.ID).Scan(&status); err != nil {
			return "", false, err
		}
		return inbox.Status(status), false, nil
	}
	if err != nil {
		return "", false, err
	}
	return inbox.Pending, true, nil
}

// Delivery returns a delivery.
func (s *Store) Delivery(ctx context.Context, id string) (_ *inbox.Delivery, err error) {
	defer wrap(&err, "Delivery %s", id)
	return scanDelivery(s.pool.QueryRow(ctx, "SELECT "+deliveryColumns+" FROM deliveries WHERE id = $1", id))
}

// ClaimDelivery leases the oldest due delivery whose key is free. Claims
// take a transaction-scoped advisory lock first, so each one sees every
// earlier claim committed.
func (s *Store) ClaimDelivery(ctx context.Context, now, lease time.Time) (_ *inbox.Delivery, err error) {
	defer wrap(&err, "ClaimDelivery")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock(hashtextextended('sip-claim:' || current_schema(), 0))"); err != nil {
		return nil, err
	}
	d, err := scanDelivery(tx.QueryRow(ctx, `UPDATE deliveries SET status = 'processing', lease_until = $1, attempts = attempts + 1
		WHERE id = (SELECT d.id FROM deliveries d
			WHERE ((d.status = 'pending' AND d.next_attempt_at <= $2) OR (d.status = 'processing' AND d.lease_until <= $2))
			  AND (d.key = '' OR NOT EXISTS (SELECT 1 FROM deliveries p
				WHERE p.key = d.key AND p.id <> d.id AND p.status = 'processing' AND p.lease_until > $2))
			ORDER BY d.next_attempt_at, d.received_at, d.id LIMIT 1)
		RETURNING `+deliveryColumns, lease, now))
	if err != nil {
		return nil, err
	}
	return d, tx.Commit(ctx)
}

func (s *Store) moveDelivery(ctx context.Context, id, set string, args ...any) error {
	tag, err := s.pool.Exec(ctx, "UPDATE deliveries SET "+set+" WHERE id = $1 AND status = 'processing'", append([]any{id}, args...)...)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delivery %s is not processing: %w", id, registry.ErrConflict)
	}
	return nil
}

// CompleteDelivery marks a processing delivery done.
func (s *Store) CompleteDelivery(ctx context.Context, id string, at time.Time) (err error) {
	defer wrap(&err, "CompleteDelivery %s", id)
	return s.moveDelivery(ctx, id, "status = 'done', done_at = $2, lease_until = NULL, last_error = ''", at)
}

// RetryDelivery returns a processing delivery to the queue.
func (s *Store) RetryDelivery(ctx context.Context, id string, next time.Time, reason string) (err error) {
	defer wrap(&err, "RetryDelivery %s", id)
	return s.moveDelivery(ctx, id, "status = 'pending', next_attempt_at = $2, lease_until = NULL, last_error = $3", next, reason)
}

// KillDelivery gives up on a processing delivery.
func (s *Store) KillDelivery(ctx context.Context, id string, reason string, at time.Time) (err error) {
	defer wrap(&err, "KillDelivery %s", id)
	return s.moveDelivery(ctx, id, "status = 'dead', done_at = $2, lease_until = NULL, last_error = $3", at, reason)
}

// DeliveryStats counts deliveries by status.
func (s *Store) DeliveryStats(ctx context.Context) (_ inbox.Stats, err error) {
	defer wrap(&err, "DeliveryStats")
	var st inbox.Stats
	var oldest *time.Time
	err = s.pool.QueryRow(ctx, `SELECT
		COUNT(*) FILTER (WHERE status = 'pending'), COUNT(*) FILTER (WHERE status = 'processing'),
		COUNT(*) FILTER (WHERE status = 'done'), COUNT(*) FILTER (WHERE status = 'dead'),
		MIN(received_at) FILTER (WHERE status = 'pending') FROM deliveries`).
		Scan(&st.Pending, &st.Processing, &st.Done, &st.Dead, &oldest)
	if oldest != nil {
		st.OldestPending = oldest.UTC()
	}
	return st, err
}

// PruneDeliveries deletes done deliveries finished before t.
func (s *Store) PruneDeliveries(ctx context.Context, before time.Time) (_ int, err error) {
	defer wrap(&err, "PruneDeliveries")
	tag, err := s.pool.Exec(ctx, "DELETE FROM deliveries WHERE status = 'done' AND done_at < $1", before)
	return int(tag.RowsAffected()), err
}

// RepositoryEpoch counts the deactivations of repositories so far.
func (s *Store) RepositoryEpoch(ctx context.Context) (_ int64, err error) {
	defer wrap(&err, "RepositoryEpoch")
	var epoch int64
	err = s.pool.QueryRow(ctx, "SELECT epoch FROM github_repository_epoch WHERE id = 1").Scan(&epoch)
	return epoch, err
}

// PutRepository adds or updates a repository unless the epoch moved past
// epoch. The epoch's row is locked for share during the write, so a
// deactivation either waits for it or is seen by it.
func (s *Store) PutRepository(ctx context.Context, r *inbox.Repository, epoch int64) (err error) {
	defer wrap(&err, "PutRepository %s", r.FullName)
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var current int64
	if err := tx.QueryRow(ctx, "SELECT epoch FROM github_repository_epoch WHERE id = 1 FOR SHARE").Scan(&current); err != nil {
		return err
	}
	if current != epoch {
		return fmt.Errorf("a repository was removed since epoch %d: %w", epoch, registry.ErrConflict)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO github_repositories AS g (id, installation_id, full_name, default_branch, clone_url, active, updated_at)
		VALUES ($1, $2, $3, $4, $5, TRUE, $6) ON CONFLICT (id) DO UPDATE SET installation_id = excluded.installation_id,
		full_name = excluded.full_name, active = TRUE, updated_at = excluded.updated_at,
		default_branch = CASE WHEN excluded.default_branch = '' THEN g.default_branch ELSE excluded.default_branch END,
		clone_url = CASE WHEN excluded.clone_url = '' THEN g.clone_url ELSE excluded.clone_url END`,
		r.ID, r.InstallationID, r.FullName, r.DefaultBranch, r.CloneURL, r.UpdatedAt); err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// DeactivateRepositories moves the epoch on and marks
// repositories inactive, in one transaction.
func (s *Store) DeactivateRepositories(ctx context.Context, installationID int64, ids []int64, at time.Time) (err error) {
	defer wrap(&err, "DeactivateRepositories")
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "UPDATE github_repository_epoch SET epoch = epoch + 1 WHERE id = 1"); err != nil {
		return err
	}
	if len(ids) == 0 {
		_, err = tx.Exec(ctx, "UPDATE github_repositories SET active = FALSE, updated_at = $1 WHERE installation_id = $2", at, installationID)
	} else {
		_, err = tx.Exec(ctx, "UPDATE github_repositories SET active = FALSE, updated_at = $1 WHERE installation_id = $2 AND id = ANY($3)",
			at, installationID, ids)
	}
	if err != nil {
		return err
	}
	return tx.Commit(ctx)
}

// Repositories lists the active repositories by name.
func (s *Store) Repositories(ctx context.Context) (_ []*inbox.Repository, err error) {
	defer wrap(&err, "Repositories")
	rows, err := s.pool.Query(ctx, `SELECT id, installation_id, full_name, default_branch, clone_url, active, updated_at
		FROM github_repositories WHERE active ORDER BY full_name`)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*inbox.Repository, error) {
		var r inbox.Repository
		err := row.Scan(&r.ID, &r.InstallationID, &r.FullName, &r.DefaultBranch, &r.CloneURL, &r.Active, &r.UpdatedAt)
		r.UpdatedAt = r.UpdatedAt.UTC()
		return &r, err
	})
}
