package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
)

const entryColumns = `s.id, s.status, s.path, s.body, s.definition, s.raw_config, s.content_sha256, s.removed,
	v.id, v.version, v.content_sha256, v.commit_sha, v.synced_at`

const entryFrom = ` FROM sips s LEFT JOIN sip_versions v ON v.id = s.current_version_id`

func scanEntry(row pgx.Row) (*registry.Entry, error) {
	var (
		e                       registry.Entry
		status                  string
		definition, rawConfig   []byte
		vID                     *int64
		vVersion, vSHA, vCommit *string
		vSyncedAt               *time.Time
	)
	if err := row.Scan(&e.ID, &status, &e.Path, &e.Body, &definition, &rawConfig, &e.ContentSHA256, &e.Removed,
		&vID, &vVersion, &vSHA, &vCommit, &vSyncedAt); err != nil {
		return nil, err
	}
	id := e.ID
	if err := json.Unmarshal(definition, &e.SIP); err != nil {
		return nil, err
	}
	e.ID = id
	e.Status = registry.Status(status) // a removed SIP reads as deprecated
	if rawConfig != nil {
		if err := json.Unmarshal(rawConfig, &e.RawConfig); err != nil {
			return nil, err
		}
	}
	if vID != nil {
		e.Current = registry.Version{ID: *vID, SIPID: e.ID, Version: *vVersion, ContentSHA256: *vSHA,
			CommitSHA: *vCommit, SyncedAt: vSyncedAt.UTC()}
	}
	return &e, nil
}

// Entries lists entries in SIP number order.
func (s *Store) Entries(ctx context.Context, f registry.EntryFilter) (_ []*registry.Entry, err error) {
	defer wrap(&err, "Entries")
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return fmt.Sprintf("$%d", len(args))
	}
	if !f.IncludeRemoved {
		where = append(where, "NOT s.removed")
	}
	if f.Module != "" {
		where = append(where, "s.module = "+arg(f.Module))
	}
	if f.EvaluationOnly {
		where = append(where, "s.type <> 'process'")
	}
	if len(f.Types) > 0 {
		types := make([]string, len(f.Types))
		for i, t := range f.Types {
			types[i] = string(t)
		}
		where = append(where, "s.type = ANY("+arg(types)+")")
	}
	if len(f.Statuses) > 0 {
		statuses := make([]string, len(f.Statuses))
		for i, st := range f.Statuses {
			statuses[i] = string(st)
		}
		where = append(where, "s.status = ANY("+arg(statuses)+")")
	}
	q := "SELECT " + entryColumns + entryFrom
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.pool.Query(ctx, q+" ORDER BY s.sip", args...)
	return collect(rows, err, scanEntry)
}

// Entry returns the entry with the given id.
func (s *Store) Entry(ctx context.Context, id string) (_ *registry.Entry, err error) {
	defer wrap(&err, "Entry(%q)", id)
	return scanEntry(s.pool.QueryRow(ctx, "SELECT "+entryColumns+entryFrom+" WHERE s.id = $1", id))
}

// EntryByNumber returns the entry with the given SIP number.
func (s *Store) EntryByNumber(ctx context.Context, n int) (_ *registry.Entry, err error) {
	defer wrap(&err, "EntryByNumber(%d)", n)
	return scanEntry(s.pool.QueryRow(ctx, "SELECT "+entryColumns+entryFrom+" WHERE s.sip = $1", n))
}

// Versions lists an entry's versions, oldest first.
func (s *Store) Versions(ctx context.Context, id string) (_ []registry.Version, err error) {
	defer wrap(&err, "Versions(%q)", id)
	var exists int
	if err := s.pool.QueryRow(ctx, "SELECT 1 FROM sips WHERE id = $1", id).Scan(&exists); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, `SELECT id, version, content_sha256, commit_sha, synced_at
		FROM sip_versions WHERE sip_id = $1 ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	versions := []registry.Version{}
	for rows.Next() {
		v := registry.Version{SIPID: id}
		if err := rows.Scan(&v.ID, &v.Version, &v.ContentSHA256, &v.CommitSHA, &v.SyncedAt); err != nil {
			return nil, err
		}
		v.SyncedAt = v.SyncedAt.UTC()
		versions = append(versions, v)
	}
	return versions, rows.Err()
}

// Content returns the file content of an entry's current version.
func (s *Store) Content(ctx context.Context, id string) (_ []byte, err error) {
	defer wrap(&err, "Content(%q)", id)
	var content []byte
	err = s.pool.QueryRow(ctx, `SELECT v.content FROM sips s JOIN sip_versions v ON v.id = s.current_version_id
		WHERE s.id = $1`, id).Scan(&content)
	return content, err
}

// SyncState returns the last applied sync. A server's store (KeepWarm)
// answers from memory while its LISTEN connection is in place, since
// every sync notifies: a sync applied by another replica is seen as soon
// as its notification arrives (a few milliseconds), and within a second
// even if it never does.
func (s *Store) SyncState(ctx context.Context) (registry.SyncState, error) {
	if !s.warm {
		return s.readSyncState(ctx)
	}
	s.startListening()
	st, epoch, ok := s.syncCache.get()
	if ok {
		return st, nil
	}
	st, err := s.readSyncState(ctx)
	if err == nil {
		s.syncCache.put(st, epoch)
	}
	return st, err
}

func (s *Store) readSyncState(ctx context.Context) (_ registry.SyncState, err error) {
	defer wrap(&err, "SyncState")
	var st registry.SyncState
	err = s.pool.QueryRow(ctx, "SELECT generation, commit_sha, source, synced_at FROM sync_state WHERE id = 1").
		Scan(&st.Generation, &st.CommitSHA, &st.Source, &st.SyncedAt)
	if err == pgx.ErrNoRows {
		return registry.SyncState{}, nil
	}
	st.SyncedAt = st.SyncedAt.UTC()
	return st, err
}

// Heads lists every entry with the fields a sync plans on.
func (s *Store) Heads(ctx context.Context) (_ []registry.Head, err error) {
	defer wrap(&err, "Heads")
	rows, err := s.pool.Query(ctx, `SELECT s.id, s.sip, s.path, s.content_sha256, s.type, s.status, s.removed,
		COALESCE((SELECT array_agg(p.prerequisite_id ORDER BY p.position) FROM sip_prerequisites p WHERE p.sip_id = s.id), '{}')
		FROM sips s ORDER BY s.sip`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var heads []registry.Head
	for rows.Next() {
		var h registry.Head
		var typ, status string
		if err := rows.Scan(&h.ID, &h.Number, &h.Path, &h.ContentSHA256, &typ, &status, &h.Removed, &h.Prerequisites); err != nil {
			return nil, err
		}
		h.Type, h.Status = registry.Type(typ), registry.Status(status)
		heads = append(heads, h)
	}
	return heads, rows.Err()
}

// collect scans every row of a query with scan.
func collect[T any](rows pgx.Rows, err error, scan func(pgx.Row) (T, error)) ([]T, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
