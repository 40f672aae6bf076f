package postgres

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/bot/inbox"
)

// PutVerification records where a repository's default branch stands.
func (s *Store) PutVerification(ctx context.Context, v *inbox.Verification) (err error) {
	defer wrap(&err, "PutVerification %d", v.RepoID)
	_, err = s.pool.Exec(ctx, `INSERT INTO github_verifications (repo_id, refused, missing, issue, updated_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (repo_id) DO UPDATE SET refused = excluded.refused, missing = excluded.missing,
		issue = excluded.issue, updated_at = excluded.updated_at`, v.RepoID, v.Refused, v.Missing, v.Issue, v.UpdatedAt)
	return err
}

// Verification returns where a repository's default branch stands.
func (s *Store) Verification(ctx context.Context, repoID int64) (_ *inbox.Verification, err error) {
	defer wrap(&err, "Verification %d", repoID)
	v := &inbox.Verification{RepoID: repoID}
	if err := s.pool.QueryRow(ctx, "SELECT refused, missing, issue, updated_at FROM github_verifications WHERE repo_id = $1", repoID).
		Scan(&v.Refused, &v.Missing, &v.Issue, &v.UpdatedAt); err != nil {
		return nil, err
	}
	v.UpdatedAt = v.UpdatedAt.UTC()
	return v, nil
}

// AddOverride records an override once per comment.
func (s *Store) AddOverride(ctx context.Context, o *inbox.Override) (_ bool, err error) {
	defer wrap(&err, "AddOverride %s", o.Subject)
	tag, err := s.pool.Exec(ctx, `INSERT INTO github_overrides (comment_id, repo_id, subject, by_login, reason, at) VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (comment_id) DO NOTHING`, o.CommentID, o.RepoID, o.Subject, o.By, o.Reason, o.At)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// Overrides lists a subject's overrides, oldest first.
func (s *Store) Overrides(ctx context.Context, repoID int64, subject string) (_ []*inbox.Override, err error) {
	defer wrap(&err, "Overrides %s", subject)
	rows, err := s.pool.Query(ctx, `SELECT comment_id, repo_id, subject, by_login, reason, at FROM github_overrides
		WHERE repo_id = $1 AND subject = $2 ORDER BY at, comment_id`, repoID, subject)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (*inbox.Override, error) {
		var o inbox.Override
		err := row.Scan(&o.CommentID, &o.RepoID, &o.Subject, &o.By, &o.Reason, &o.At)
		o.At = o.At.UTC()
		return &o, err
	})
}
