package sqlite

import (
	"context"

	"github.com/sipregistry/sip/bot/inbox"
)

// PutVerification records where a repository's default branch stands.
func (s *Store) PutVerification(ctx context.Context, v *inbox.Verification) (err error) {
	defer wrap(&err, "PutVerification %d", v.RepoID)
	_, err = s.exec(ctx, `INSERT INTO github_verifications (repo_id, refused, missing, issue, updated_at) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (repo_id) DO UPDATE SET refused = excluded.refused, missing = excluded.missing,
		issue = excluded.issue, updated_at = excluded.updated_at`, v.RepoID, v.Refused, v.Missing, v.Issue, formatTime(v.UpdatedAt))
	return err
}

// Verification returns where a repository's default branch stands.
func (s *Store) Verification(ctx context.Context, repoID int64) (_ *inbox.Verification, err error) {
	defer wrap(&err, "Verification %d", repoID)
	v := &inbox.Verification{RepoID: repoID}
	var at string
	if err := s.queryRow(ctx, "SELECT refused, missing, issue, updated_at FROM github_verifications WHERE repo_id = ?", repoID).
		Scan(&v.Refused, &v.Missing, &v.Issue, &at); err != nil {
		return nil, err
	}
	v.UpdatedAt, err = parseTime(at)
	return v, err
}

// AddOverride records an override once per comment.
func (s *Store) AddOverride(ctx context.Context, o *inbox.Override) (_ bool, err error) {
	defer wrap(&err, "AddOverride %s", o.Subject)
	res, err := s.exec(ctx, `INSERT INTO github_overrides (comment_id, repo_id, subject, by_login, reason, at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (comment_id) DO NOTHING`, o.CommentID, o.RepoID, o.Subject, o.By, o.Reason, formatTime(o.At))
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// Overrides lists a subject's overrides, oldest first.
func (s *Store) Overrides(ctx context.Context, repoID int64, subject string) (_ []*inbox.Override, err error) {
	defer wrap(&err, "Overrides %s", subject)
	rows, err := s.query(ctx, `SELECT comment_id, repo_id, subject, by_login, reason, at FROM github_overrides
		WHERE repo_id = ? AND subject = ? ORDER BY at, comment_id`, repoID, subject)
	return collect(rows, err, func(row scanner) (*inbox.Override, error) {
		var o inbox.Override
		var at string
		if err := row.Scan(&o.CommentID, &o.RepoID, &o.Subject, &o.By, &o.Reason, &at); err != nil {
			return nil, err
		}
		o.At, err = parseTime(at)
		return &o, err
	})
}
