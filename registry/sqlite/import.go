package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// ImportBatch writes a batch of another registry's records in one
// transaction. The ledger row of each record is written first: a record
// the ledger holds is skipped.
func (s *Store) ImportBatch(ctx context.Context, b *evaluation.ImportBatch) (_ evaluation.ImportCounts, err error) {
	defer wrap(&err, "ImportBatch(%s)", b.Source)
	var n evaluation.ImportCounts
	tx, done, err := s.begin(ctx)
	if err != nil {
		return n, err
	}
	defer done()
	// An import inserts into every index of results at random places (its
	// ids are hashes): a page cache of importCacheKiB keeps the indexes'
	// inner pages at hand instead of reading them again and again. It is
	// the connection's, bounded, and only imports set it.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA cache_size = -%d", importCacheKiB)); err != nil {
		return n, err
	}
	st, err := prepareImport(ctx, tx)
	if err != nil {
		return n, err
	}
	defer st.close()
	at := formatTime(b.At)
	ledger := func(kind, sourceID, targetID string) (bool, error) {
		res, err := st.ledger.ExecContext(ctx, b.Source, kind, sourceID, targetID, at)
		if err != nil {
			return false, err
		}
		rows, err := res.RowsAffected()
		return rows == 1, err
	}
	for i := range b.Agents {
		ia := &b.Agents[i]
		fresh, err := ledger("agent", ia.SourceID, ia.Agent.ID)
		if err != nil {
			return n, err
		}
		if !fresh {
			n.Skipped++
			continue
		}
		ok, err := st.importAgent(ctx, &ia.Agent, ia.Agent.Name)
		if err == nil && !ok && ia.FallbackName != "" {
			if ok, err = st.importAgent(ctx, &ia.Agent, ia.FallbackName); ok {
				n.Renamed++
			}
		}
		if err != nil {
			return n, err
		}
		if !ok {
			return n, fmt.Errorf("agent %s: its name %q and its fallback %q are taken, or its key id is: %w", ia.SourceID, ia.Agent.Name, ia.FallbackName, registry.ErrConflict)
		}
		n.Agents++
	}
	credited := map[[2]string]bool{} // agent and evaluation pairs known to hold points
	for i := range b.Results {
		ir := &b.Results[i]
		fresh, err := ledger("result", ir.SourceID, ir.Result.ID)
		if err != nil {
			return n, err
		}
		if !fresh {
			n.Skipped++
			continue
		}
		earned, err := st.importResult(ctx, ir, credited)
		if err != nil {
			return n, fmt.Errorf("result %s: %w", ir.SourceID, err)
		}
		n.Results++
		if earned {
			n.Credited++
		}
	}
	for i := range b.Sessions {
		is := &b.Sessions[i]
		fresh, err := ledger("session", is.SourceID, is.Session.ID)
		if err != nil {
			return n, err
		}
		if !fresh {
			n.Skipped++
			continue
		}
		if err := st.importSession(ctx, is); err != nil {
			return n, fmt.Errorf("session %s: %w", is.SourceID, err)
		}
		n.Sessions++
	}
	// A message or transcript whose counterpart is not here takes no
	// ledger row, so an import that brings the counterpart writes it.
	unledger := func(kind, sourceID string) error {
		_, err := st.unledger.ExecContext(ctx, b.Source, kind, sourceID)
		return err
	}
	touched := map[string]bool{}
	for i := range b.Messages {
		im := &b.Messages[i]
		m := &im.Message
		fresh, err := ledger("message", im.SourceID, m.ID)
		if err != nil {
			return n, err
		}
		if !fresh {
			n.Skipped++
			continue
		}
		res, err := st.message.ExecContext(ctx, m.ID, m.SessionID, m.Sequence, m.SenderID, m.Role, m.Content, formatTime(m.CreatedAt), m.SessionID, m.SenderID)
		if err != nil {
			return n, fmt.Errorf("message %s: %w", im.SourceID, err)
		}
		if rows, err := res.RowsAffected(); err != nil {
			return n, err
		} else if rows == 0 {
			n.Unmatched++
			if err := unledger("message", im.SourceID); err != nil {
				return n, err
			}
			continue
		}
		touched[m.SessionID] = true
		n.Messages++
	}
	for id := range touched {
		if _, err := st.lastSequence.ExecContext(ctx, id, id); err != nil {
			return n, err
		}
	}
	for i := range b.Transcripts {
		it := &b.Transcripts[i]
		j := &it.Job
		fresh, err := ledger("transcript", it.SourceID, j.ID)
		if err != nil {
			return n, err
		}
		if !fresh {
			n.Skipped++
			continue
		}
		res, err := st.job.ExecContext(ctx, j.ID, j.RegistrationID, j.AgentID, j.EvaluationID, string(j.Status), j.Submission, j.ResultID,
			formatTime(j.CreatedAt), formatTime(j.UpdatedAt), j.ResultID, j.RegistrationID)
		if err != nil {
			return n, fmt.Errorf("transcript %s: %w", it.SourceID, err)
		}
		if rows, err := res.RowsAffected(); err != nil {
			return n, err
		} else if rows == 0 {
			n.Unmatched++
			if err := unledger("transcript", it.SourceID); err != nil {
				return n, err
			}
			continue
		}
		n.Transcripts++
	}
	return n, tx.Commit()
}

// importSession inserts an ended session and its participants.
func (st *importStmts) importSession(ctx context.Context, is *evaluation.ImportedSession) error {
	ss := &is.Session
	if _, err := st.session.ExecContext(ctx, ss.ID, ss.EvaluationID, string(ss.Kind), string(ss.Status), nullString(ss.RegistrationID),
		nullString(ss.ProctorID), ss.MinParticipants, ss.MaxParticipants, ss.Participants, formatTime(ss.CreatedAt), nullTime(ss.StartedAt),
		nullTime(ss.EndedAt), ss.VersionID); err != nil {
		return err
	}
	for _, p := range is.Participants {
		if _, err := st.participant.ExecContext(ctx, ss.ID, p.AgentID, p.Role, nullString(p.RegistrationID), formatTime(p.JoinedAt)); err != nil {
			return err
		}
	}
	return nil
}

// importCacheKiB is the page cache of a connection that imports.
const importCacheKiB = 128 << 10

// importStmts are the statements of an import batch, prepared once.
type importStmts struct {
	ledger, unledger, agent, registration, credited, result *sql.Stmt
	session, participant, message, lastSequence, job        *sql.Stmt
}

func prepareImport(ctx context.Context, tx *sql.Tx) (*importStmts, error) {
	var st importStmts
	for _, p := range []struct {
		into  **sql.Stmt
		query string
	}{
		{&st.ledger, `INSERT INTO import_ledger (source, kind, source_id, target_id, imported_at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`},
		{&st.unledger, `DELETE FROM import_ledger WHERE source = ? AND kind = ? AND source_id = ?`},
		{&st.session, `INSERT INTO sessions (id, evaluation_id, kind, status, registration_id, proctor_id, min_participants, max_participants,
			participants, created_at, started_at, ended_at, version_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&st.participant, `INSERT INTO session_participants (session_id, agent_id, role, registration_id, joined_at) VALUES (?, ?, ?, ?, ?)`},
		{&st.message, `INSERT INTO session_messages (id, session_id, sequence, sender_id, role, content, created_at)
			SELECT ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM session_participants WHERE session_id = ? AND agent_id = ?)
			ON CONFLICT DO NOTHING`},
		{&st.lastSequence, `UPDATE sessions SET last_sequence = (SELECT max(sequence) FROM session_messages WHERE session_id = ?) WHERE id = ?`},
		{&st.job, `INSERT INTO jobs (id, registration_id, agent_id, evaluation_id, status, submission, result_id, created_at, updated_at)
			SELECT ?, ?, ?, ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM results WHERE id = ? AND registration_id = ?)
			ON CONFLICT DO NOTHING`},
		{&st.agent, `INSERT INTO agents (id, name, name_key, description, key_id, key_hash, claim_token_hash,
			verification_code, owner, claimed_at, identity_md, results_public, created_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING`},
		{&st.registration, `INSERT INTO registrations (id, agent_id, evaluation_id, version_id, status, registered_at, started_at, completed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`},
		{&st.credited, "SELECT count(*) FROM results WHERE agent_id = ? AND evaluation_id = ? AND points_earned > 0"},
		{&st.result, `INSERT INTO results (id, registration_id, agent_id, evaluation_id, version_id, version, content_sha256,
			passed, score, max_score, points_earned, details, trace, completed_at, expires_at, outcome, provenance)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
	} {
		s, err := tx.PrepareContext(ctx, p.query)
		if err != nil {
			st.close()
			return nil, err
		}
		*p.into = s
	}
	return &st, nil
}

func (st *importStmts) close() {
	for _, s := range []*sql.Stmt{st.ledger, st.unledger, st.agent, st.registration, st.credited, st.result,
		st.session, st.participant, st.message, st.lastSequence, st.job} {
		if s != nil {
			s.Close()
		}
	}
}

// importAgent inserts the agent under name; false when a unique column
// (the name ignoring case, or the key id) is taken.
func (st *importStmts) importAgent(ctx context.Context, a *registry.Agent, name string) (bool, error) {
	var claimed any
	if a.Owner != "" {
		claimed = formatTime(a.ClaimedAt)
	}
	res, err := st.agent.ExecContext(ctx, a.ID, name, strings.ToLower(name), a.Description, a.KeyID, a.KeyHash, a.ClaimTokenHash, a.VerificationCode,
		a.Owner, claimed, a.IdentityMD, a.ResultsPublic, formatTime(a.CreatedAt))
	if err != nil {
		return false, err
	}
	rows, err := res.RowsAffected()
	return rows == 1, err
}

// importResult inserts a completed registration and its result, crediting
// points when no result of the agent's earned them for the evaluation.
func (st *importStmts) importResult(ctx context.Context, ir *evaluation.ImportedResult, credited map[[2]string]bool) (earned bool, _ error) {
	reg, r := &ir.Registration, &ir.Result
	if _, err := st.registration.ExecContext(ctx, reg.ID, reg.AgentID, reg.EvaluationID, reg.VersionID, string(reg.Status),
		formatTime(reg.RegisteredAt), nullTime(reg.StartedAt), formatTime(reg.CompletedAt)); err != nil {
		return false, err
	}
	points := 0.0
	if key := [2]string{r.AgentID, r.EvaluationID}; r.Passed && ir.Points > 0 && !credited[key] {
		var n int
		if err := st.credited.QueryRowContext(ctx, r.AgentID, r.EvaluationID).Scan(&n); err != nil {
			return false, err
		}
		if n == 0 {
			points = ir.Points
		}
		credited[key] = true
	}
	details, err := json.Marshal(orEmpty(r.Details))
	if err != nil {
		return false, err
	}
	trace, err := json.Marshal(r.Trace)
	if err != nil {
		return false, err
	}
	if _, err := st.result.ExecContext(ctx, r.ID, r.RegistrationID, r.AgentID, r.EvaluationID, r.VersionID, r.Version, r.ContentSHA256, r.Passed,
		r.Score, r.MaxScore, points, string(details), string(trace), formatTime(r.CompletedAt), nullTime(r.ExpiresAt),
		string(r.EndedAs()), string(r.Of())); err != nil {
		return false, err
	}
	return points > 0, nil
}

// ImportVersions lists every SIP's version rows, oldest first.
func (s *Store) ImportVersions(ctx context.Context) (_ []evaluation.VersionRef, err error) {
	defer wrap(&err, "ImportVersions")
	rows, err := s.db.QueryContext(ctx, `SELECT v.sip_id, v.id, v.version, v.content_sha256, s.handler, s.points, s.current_version_id = v.id
		FROM sip_versions v JOIN sips s ON s.id = v.sip_id ORDER BY v.sip_id, v.id`)
	return collect(rows, err, func(row scanner) (evaluation.VersionRef, error) {
		var v evaluation.VersionRef
		var current sql.NullBool
		err := row.Scan(&v.EvaluationID, &v.VersionID, &v.Version, &v.ContentSHA256, &v.Handler, &v.Points, &current)
		v.Current = current.Bool
		return v, err
	})
}

// ImportedCount counts the records of a kind the ledger holds for a source.
func (s *Store) ImportedCount(ctx context.Context, source, kind string) (_ int, err error) {
	defer wrap(&err, "ImportedCount")
	var n int
	err = s.db.QueryRowContext(ctx, "SELECT count(*) FROM import_ledger WHERE source = ? AND kind = ?", source, kind).Scan(&n)
	return n, err
}

// nullString is NULL for "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
