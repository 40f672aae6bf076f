package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"strings"

	"github.com/sipregistry/sip/registry"
)

const entryColumns = `s.id, s.status, s.path, s.body, s.definition, s.raw_config, s.content_sha256, s.removed,
	v.id, v.version, v.content_sha256, v.commit_sha, v.synced_at`

const entryFrom = ` FROM sips s LEFT JOIN sip_versions v ON v.id = s.current_version_id`

type scanner interface{ Scan(dest ...any) error }

func scanEntry(row scanner) (*registry.Entry, error) {
	var (
		e                       registry.Entry
		status, definition      string
		rawConfig               sql.NullString
		removed                 bool
		vID                     sql.NullInt64
		vVersion, vSHA, vCommit sql.NullString
		vSyncedAt               sql.NullString
	)
	if err := row.Scan(&e.ID, &status, &e.Path, &e.Body, &definition, &rawConfig, &e.ContentSHA256, &removed,
		&vID, &vVersion, &vSHA, &vCommit, &vSyncedAt); err != nil {
		return nil, err
	}
	id := e.ID
	if err := json.Unmarshal([]byte(definition), &e.SIP); err != nil {
		return nil, err
	}
	e.ID = id
	e.Status = registry.Status(status) // a removed SIP reads as deprecated
	e.Removed = removed
	if rawConfig.Valid {
		if err := json.Unmarshal([]byte(rawConfig.String), &e.RawConfig); err != nil {
			return nil, err
		}
	}
	if vID.Valid {
		at, err := parseTime(vSyncedAt.String)
		if err != nil {
			return nil, err
		}
		e.Current = registry.Version{ID: vID.Int64, SIPID: e.ID, Version: vVersion.String,
			ContentSHA256: vSHA.String, CommitSHA: vCommit.String, SyncedAt: at}
	}
	return &e, nil
}

// Entries lists entries in SIP number order.
func (s *Store) Entries(ctx context.Context, f registry.EntryFilter) (_ []*registry.Entry, err error) {
	defer wrap(&err, "Entries")
	var where []string
	var args []any
	if !f.IncludeRemoved {
		where = append(where, "s.removed = 0")
	}
	if f.Module != "" {
		where, args = append(where, "s.module = ?"), append(args, f.Module)
	}
	if f.EvaluationOnly {
		where = append(where, "s.type <> 'process'")
	}
	if len(f.Types) > 0 {
		where = append(where, "s.type IN ("+placeholders(len(f.Types))+")")
		for _, t := range f.Types {
			args = append(args, string(t))
		}
	}
	if len(f.Statuses) > 0 {
		where = append(where, "s.status IN ("+placeholders(len(f.Statuses))+")")
		for _, st := range f.Statuses {
			args = append(args, string(st))
		}
	}
	q := "SELECT " + entryColumns + entryFrom
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	rows, err := s.query(ctx, q+" ORDER BY s.sip", args...)
	return collect(rows, err, scanEntry)
}

// Entry returns the entry with the given id.
func (s *Store) Entry(ctx context.Context, id string) (_ *registry.Entry, err error) {
	defer wrap(&err, "Entry(%q)", id)
	return scanEntry(s.queryRow(ctx, "SELECT "+entryColumns+entryFrom+" WHERE s.id = ?", id))
}

// EntryByNumber returns the entry with the given SIP number.
func (s *Store) EntryByNumber(ctx context.Context, n int) (_ *registry.Entry, err error) {
	defer wrap(&err, "EntryByNumber(%d)", n)
	return scanEntry(s.queryRow(ctx, "SELECT "+entryColumns+entryFrom+" WHERE s.sip = ?", n))
}

// Versions lists an entry's versions, oldest first.
func (s *Store) Versions(ctx context.Context, id string) (_ []registry.Version, err error) {
	defer wrap(&err, "Versions(%q)", id)
	var exists int
	if err := s.queryRow(ctx, "SELECT 1 FROM sips WHERE id = ?", id).Scan(&exists); err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, `SELECT id, version, content_sha256, commit_sha, synced_at
		FROM sip_versions WHERE sip_id = ? ORDER BY id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	versions := []registry.Version{}
	for rows.Next() {
		v := registry.Version{SIPID: id}
		var at string
		if err := rows.Scan(&v.ID, &v.Version, &v.ContentSHA256, &v.CommitSHA, &at); err != nil {
			return nil, err
		}
		if v.SyncedAt, err = parseTime(at); err != nil {
			return nil, err
		}
		versions = append(versions, v)
	}
	return versions, rows.Err()
}

// Content returns the file content of an entry's current version.
func (s *Store) Content(ctx context.Context, id string) (_ []byte, err error) {
	defer wrap(&err, "Content(%q)", id)
	var content []byte
	err = s.queryRow(ctx, `SELECT v.content FROM sips s JOIN sip_versions v ON v.id = s.current_version_id
		WHERE s.id = ?`, id).Scan(&content)
	return content, err
}

// Heads lists every entry with the fields a sync plans on.
func (s *Store) Heads(ctx context.Context) (_ []registry.Head, err error) {
	defer wrap(&err, "Heads")
	rows, err := s.query(ctx, `SELECT id, sip, path, content_sha256, type, status, removed FROM sips ORDER BY sip`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var heads []registry.Head
	at := map[string]int{}
	for rows.Next() {
		var h registry.Head
		var typ, status string
		if err := rows.Scan(&h.ID, &h.Number, &h.Path, &h.ContentSHA256, &typ, &status, &h.Removed); err != nil {
			return nil, err
		}
		h.Type, h.Status, h.Prerequisites = registry.Type(typ), registry.Status(status), []string{}
		at[h.ID] = len(heads)
		heads = append(heads, h)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	pre, err := s.query(ctx, `SELECT sip_id, prerequisite_id FROM sip_prerequisites ORDER BY sip_id, position`)
	if err != nil {
		return nil, err
	}
	defer pre.Close()
	for pre.Next() {
		var id, p string
		if err := pre.Scan(&id, &p); err != nil {
			return nil, err
		}
		if i, ok := at[id]; ok {
			heads[i].Prerequisites = append(heads[i].Prerequisites, p)
		}
	}
	return heads, pre.Err()
}
