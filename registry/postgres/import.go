package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// ImportBatch writes a batch of another registry's records in one
// transaction, a few statements a batch: the ledger rows of the batch
// first (the records whose rows were already there are skipped; a
// concurrent import writing the same rows waits for this one and then
// skips them), then the agents, then registrations and results by COPY.
func (s *Store) ImportBatch(ctx context.Context, b *evaluation.ImportBatch) (_ evaluation.ImportCounts, err error) {
	defer wrap(&err, "ImportBatch(%s)", b.Source)
	var n evaluation.ImportCounts
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return n, err
	}
	defer tx.Rollback(ctx)
	var ledger ledgerFunc = func(kind string, ids, targets []string) (map[string]bool, error) {
		rows, err := tx.Query(ctx, `INSERT INTO import_ledger (source, kind, source_id, target_id, imported_at)
			SELECT $1, $2, u.s, u.t, $3 FROM unnest($4::text[], $5::text[]) AS u(s, t)
			ON CONFLICT DO NOTHING RETURNING source_id`, b.Source, kind, b.At, ids, targets)
		fresh, err := collect(rows, err, func(row pgx.Row) (string, error) {
			var id string
			return id, row.Scan(&id)
		})
		set := make(map[string]bool, len(fresh))
		for _, id := range fresh {
			set[id] = true
		}
		return set, err
	}

	ids, targets := make([]string, len(b.Agents)), make([]string, len(b.Agents))
	for i, ia := range b.Agents {
		ids[i], targets[i] = ia.SourceID, ia.Agent.ID
	}
	fresh, err := ledger("agent", ids, targets)
	if err != nil {
		return n, err
	}
	var todo []*evaluation.ImportedAgent
	for i := range b.Agents {
		if fresh[b.Agents[i].SourceID] {
			todo = append(todo, &b.Agents[i])
		} else {
			n.Skipped++
		}
	}
	taken, err := importAgents(ctx, tx, todo, false)
	if err != nil {
		return n, err
	}
	n.Agents += len(todo) - len(taken)
	if len(taken) > 0 {
		still, err := importAgents(ctx, tx, taken, true)
		if err != nil {
			return n, err
		}
		if len(still) > 0 {
			ia := still[0]
			return n, fmt.Errorf("agent %s: its name %q and its fallback %q are taken, or its key id is: %w", ia.SourceID, ia.Agent.Name, ia.FallbackName, registry.ErrConflict)
		}
		n.Agents += len(taken)
		n.Renamed += len(taken)
	}

	ids, targets = make([]string, len(b.Results)), make([]string, len(b.Results))
	for i, ir := range b.Results {
		ids[i], targets[i] = ir.SourceID, ir.Result.ID
	}
	if fresh, err = ledger("result", ids, targets); err != nil {
		return n, err
	}
	var results []*evaluation.ImportedResult
	for i := range b.Results {
		if fresh[b.Results[i].SourceID] {
			results = append(results, &b.Results[i])
		} else {
			n.Skipped++
		}
	}
	if len(results) > 0 {
		if err := importResults(ctx, tx, results, &n); err != nil {
			return n, err
		}
	}
	if err := importSessions(ctx, tx, b, ledger, &n); err != nil {
		return n, err
	}
	return n, tx.Commit(ctx)
}

// importResults writes registrations and results by COPY, crediting
// points once per agent and evaluation.
func importResults(ctx context.Context, tx pgx.Tx, results []*evaluation.ImportedResult, n *evaluation.ImportCounts) error {
	agentIDs := make([]string, len(results))
	for i, ir := range results {
		agentIDs[i] = ir.Result.AgentID
	}
	// Points are credited once per agent and evaluation: to the first
	// pass of the batch whose agent holds none yet.
	rows, err := tx.Query(ctx, "SELECT DISTINCT agent_id, evaluation_id FROM results WHERE agent_id = ANY($1) AND points_earned > 0", agentIDs)
	pairs, err := collect(rows, err, func(row pgx.Row) ([2]string, error) {
		var p [2]string
		return p, row.Scan(&p[0], &p[1])
	})
	if err != nil {
		return err
	}
	credited := make(map[[2]string]bool, len(pairs))
	for _, p := range pairs {
		credited[p] = true
	}
	regRows := make([][]any, len(results))
	resRows := make([][]any, len(results))
	for i, ir := range results {
		reg, r := &ir.Registration, &ir.Result
		regRows[i] = []any{reg.ID, reg.AgentID, reg.EvaluationID, reg.VersionID, string(reg.Status), reg.RegisteredAt, nullTime(reg.StartedAt), reg.CompletedAt}
		points := 0.0
		if key := [2]string{r.AgentID, r.EvaluationID}; r.Passed && ir.Points > 0 && !credited[key] {
			points, credited[key] = ir.Points, true
			n.Credited++
		}
		details, err := json.Marshal(orEmpty(r.Details))
		if err != nil {
			return err
		}
		trace, err := json.Marshal(r.Trace)
		if err != nil {
			return err
		}
		resRows[i] = []any{r.ID, r.RegistrationID, r.AgentID, r.EvaluationID, r.VersionID, r.Version, r.ContentSHA256, r.Passed,
			r.Score, r.MaxScore, points, string(details), string(trace), r.CompletedAt, nullTime(r.ExpiresAt), string(r.EndedAs()), string(r.Of())}
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"registrations"},
		[]string{"id", "agent_id", "evaluation_id", "version_id", "status", "registered_at", "started_at", "completed_at"},
		pgx.CopyFromRows(regRows)); err != nil {
		return err
	}
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"results"},
		[]string{"id", "registration_id", "agent_id", "evaluation_id", "version_id", "version", "content_sha256", "passed",
			"score", "max_score", "points_earned", "details", "trace", "completed_at", "expires_at", "outcome", "provenance"},
		pgx.CopyFromRows(resRows)); err != nil {
		return err
	}
	n.Results += len(results)
	return nil
}

// ledgerFunc writes the ledger rows of a kind and returns the source ids
// whose rows were not there yet.
type ledgerFunc func(kind string, ids, targets []string) (map[string]bool, error)

// importSessions writes the batch's sessions with their participants (by
// COPY), then its messages and transcripts, each kind in one statement. A
// message whose sender is not a participant of the imported session, or
// a transcript whose result was not imported, is not written and its
// ledger row is taken back, so a later import that brings its
// counterpart writes it.
func importSessions(ctx context.Context, tx pgx.Tx, b *evaluation.ImportBatch, ledger ledgerFunc, n *evaluation.ImportCounts) error {
	if len(b.Sessions) > 0 {
		ids, targets := make([]string, len(b.Sessions)), make([]string, len(b.Sessions))
		for i, is := range b.Sessions {
			ids[i], targets[i] = is.SourceID, is.Session.ID
		}
		fresh, err := ledger("session", ids, targets)
		if err != nil {
			return err
		}
		var sessRows, partRows [][]any
		for i := range b.Sessions {
			is := &b.Sessions[i]
			if !fresh[is.SourceID] {
				n.Skipped++
				continue
			}
			ss := &is.Session
			sessRows = append(sessRows, []any{ss.ID, ss.EvaluationID, string(ss.Kind), string(ss.Status), nullString(ss.RegistrationID),
				nullString(ss.ProctorID), ss.MinParticipants, ss.MaxParticipants, ss.Participants, ss.CreatedAt, nullTime(ss.StartedAt),
				nullTime(ss.EndedAt), ss.VersionID})
			for _, p := range is.Participants {
				partRows = append(partRows, []any{ss.ID, p.AgentID, p.Role, nullString(p.RegistrationID), p.JoinedAt})
			}
		}
		if len(sessRows) > 0 {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"sessions"}, []string{"id", "evaluation_id", "kind", "status", "registration_id",
				"proctor_id", "min_participants", "max_participants", "participants", "created_at", "started_at", "ended_at", "version_id"},
				pgx.CopyFromRows(sessRows)); err != nil {
				return err
			}
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"session_participants"}, []string{"session_id", "agent_id", "role", "registration_id", "joined_at"},
				pgx.CopyFromRows(partRows)); err != nil {
				return err
			}
			n.Sessions += len(sessRows)
		}
	}
	unledger := func(kind string, ids []string) error {
		if len(ids) == 0 {
			return nil
		}
		_, err := tx.Exec(ctx, "DELETE FROM import_ledger WHERE source = $1 AND kind = $2 AND source_id = ANY($3)", b.Source, kind, ids)
		return err
	}
	// settle reads the ids an INSERT … RETURNING id wrote and takes the
	// rest of bySource (written id → source id) off the ledger, counting
	// them unmatched, so that a later import can still bring them.
	settle := func(kind string, rows pgx.Rows, err error, bySource map[string]string) (int, error) {
		written, err := collect(rows, err, func(row pgx.Row) (string, error) {
			var id string
			return id, row.Scan(&id)
		})
		if err != nil {
			return 0, err
		}
		for _, id := range written {
			delete(bySource, id)
		}
		var gone []string
		for _, src := range bySource {
			gone = append(gone, src)
		}
		n.Unmatched += len(gone)
		return len(written), unledger(kind, gone)
	}
	if len(b.Messages) > 0 {
		ids, targets := make([]string, len(b.Messages)), make([]string, len(b.Messages))
		for i, im := range b.Messages {
			ids[i], targets[i] = im.SourceID, im.Message.ID
		}
		fresh, err := ledger("message", ids, targets)
		if err != nil {
			return err
		}
		var mids, sessions, senders, roles, contents []string
		var seqs []int64
		var ats []time.Time
		bySource := map[string]string{}
		for _, im := range b.Messages {
			if !fresh[im.SourceID] {
				n.Skipped++
				continue
			}
			m := &im.Message
			bySource[m.ID] = im.SourceID
			mids, sessions, seqs, senders = append(mids, m.ID), append(sessions, m.SessionID), append(seqs, m.Sequence), append(senders, m.SenderID)
			roles, contents, ats = append(roles, m.Role), append(contents, m.Content), append(ats, m.CreatedAt)
		}
		if len(mids) > 0 {
			rows, err := tx.Query(ctx, `INSERT INTO session_messages (id, session_id, sequence, sender_id, role, content, created_at)
				SELECT u.id, u.session_id, u.seq, u.sender, u.role, u.content, u.at
				FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[], $6::text[], $7::timestamptz[]) AS u(id, session_id, seq, sender, role, content, at)
				WHERE EXISTS (SELECT 1 FROM session_participants p WHERE p.session_id = u.session_id AND p.agent_id = u.sender)
				ON CONFLICT DO NOTHING RETURNING id`, mids, sessions, seqs, senders, roles, contents, ats)
			written, err := settle("message", rows, err, bySource)
			if err != nil {
				return err
			}
			n.Messages += written
			if _, err := tx.Exec(ctx, `UPDATE sessions s SET last_sequence = m.seq
				FROM (SELECT session_id, max(sequence) AS seq FROM session_messages WHERE session_id = ANY($1) GROUP BY session_id) m
				WHERE s.id = m.session_id AND s.last_sequence < m.seq`, sessions); err != nil {
				return err
			}
		}
	}
	if len(b.Transcripts) > 0 {
		ids, targets := make([]string, len(b.Transcripts)), make([]string, len(b.Transcripts))
		for i, it := range b.Transcripts {
			ids[i], targets[i] = it.SourceID, it.Job.ID
		}
		fresh, err := ledger("transcript", ids, targets)
		if err != nil {
			return err
		}
		var jids, regs, agents, evals, statuses, results []string
		var subs [][]byte
		var created, updated []time.Time
		bySource := map[string]string{}
		for _, it := range b.Transcripts {
			if !fresh[it.SourceID] {
				n.Skipped++
				continue
			}
			j := &it.Job
			bySource[j.ID] = it.SourceID
			jids, regs, agents, evals = append(jids, j.ID), append(regs, j.RegistrationID), append(agents, j.AgentID), append(evals, j.EvaluationID)
			statuses, subs, results = append(statuses, string(j.Status)), append(subs, j.Submission), append(results, j.ResultID)
			created, updated = append(created, j.CreatedAt), append(updated, j.UpdatedAt)
		}
		if len(jids) > 0 {
			rows, err := tx.Query(ctx, `INSERT INTO jobs (id, registration_id, agent_id, evaluation_id, status, submission, result_id, created_at, updated_at)
				SELECT u.id, u.reg, u.agent, u.eval, u.status, u.sub, u.result, u.created, u.updated
				FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::bytea[], $7::text[], $8::timestamptz[], $9::timestamptz[])
					AS u(id, reg, agent, eval, status, sub, result, created, updated)
				WHERE EXISTS (SELECT 1 FROM results r WHERE r.id = u.result AND r.registration_id = u.reg)
				ON CONFLICT DO NOTHING RETURNING id`, jids, regs, agents, evals, statuses, subs, results, created, updated)
			written, err := settle("transcript", rows, err, bySource)
			if err != nil {
				return err
			}
			n.Transcripts += written
		}
	}
	return nil
}

// importAgents inserts agents in one statement, under their names or
// their fallback names, and returns those a unique column (the name
// ignoring case, or the key id) refused.
func importAgents(ctx context.Context, tx pgx.Tx, agents []*evaluation.ImportedAgent, fallback bool) ([]*evaluation.ImportedAgent, error) {
	if len(agents) == 0 {
		return nil, nil
	}
	n := len(agents)
	ids, names, keys, descs, keyIDs, keyHashes, claimHashes := make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	codes, owners, identities := make([]string, n), make([]string, n), make([]string, n)
	claimed, created := make([]*time.Time, n), make([]time.Time, n)
	public := make([]bool, n)
	for i, ia := range agents {
		a, name := &ia.Agent, ia.Agent.Name
		if fallback {
			name = ia.FallbackName
		}
		if a.Owner != "" {
			claimed[i] = &a.ClaimedAt
		}
		ids[i], names[i], keys[i], descs[i], keyIDs[i], keyHashes[i], claimHashes[i] = a.ID, name, strings.ToLower(name), a.Description, a.KeyID, a.KeyHash, a.ClaimTokenHash
		codes[i], owners[i], identities[i], public[i], created[i] = a.VerificationCode, a.Owner, a.IdentityMD, a.ResultsPublic, a.CreatedAt
	}
	// One statement: rows a unique column refuses (a taken name, ignoring
	// case, even by an earlier row of the batch, or a taken key id) are
	// not returned.
	rows, err := tx.Query(ctx, `INSERT INTO agents (id, name, name_key, description, key_id, key_hash, claim_token_hash,
			verification_code, owner, claimed_at, identity_md, results_public, created_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
			$10::timestamptz[], $11::text[], $12::bool[], $13::timestamptz[])
		ON CONFLICT DO NOTHING RETURNING id`,
		ids, names, keys, descs, keyIDs, keyHashes, claimHashes, codes, owners, claimed, identities, public, created)
	inserted, err := collect(rows, err, func(row pgx.Row) (string, error) {
		var id string
		return id, row.Scan(&id)
	})
	if err != nil {
		return nil, err
	}
	done := make(map[string]bool, len(inserted))
	for _, id := range inserted {
		done[id] = true
	}
	var refused []*evaluation.ImportedAgent
	for _, ia := range agents {
		if !done[ia.Agent.ID] {
			refused = append(refused, ia)
		}
	}
	return refused, nil
}

// ImportVersions lists every SIP's version rows, oldest first.
func (s *Store) ImportVersions(ctx context.Context) (_ []evaluation.VersionRef, err error) {
	defer wrap(&err, "ImportVersions")
	rows, err := s.pool.Query(ctx, `SELECT v.sip_id, v.id, v.version, v.content_sha256, s.handler, s.points, COALESCE(s.current_version_id = v.id, false)
		FROM sip_versions v JOIN sips s ON s.id = v.sip_id ORDER BY v.sip_id, v.id`)
	return collect(rows, err, func(row pgx.Row) (evaluation.VersionRef, error) {
		var v evaluation.VersionRef
		return v, row.Scan(&v.EvaluationID, &v.VersionID, &v.Version, &v.ContentSHA256, &v.Handler, &v.Points, &v.Current)
	})
}

// ImportedCount counts the records of a kind the ledger holds for a source.
func (s *Store) ImportedCount(ctx context.Context, source, kind string) (_ int, err error) {
	defer wrap(&err, "ImportedCount")
	var n int
	err = s.pool.QueryRow(ctx, "SELECT count(*) FROM import_ledger WHERE source = $1 AND kind = $2", source, kind).Scan(&n)
	return n, err
}

// nullString is NULL for "".
func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}
