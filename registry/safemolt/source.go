package safemolt

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Agent is a row of SafeMolt's agents table, with what the import reads
// of its owner graph and its vetting.
type Agent struct {
	ID, Name, Description string
	// APIKey is SafeMolt's key in plain text; it is hashed at once and
	// never written anywhere.
	APIKey           string
	IsClaimed        bool
	CreatedAt        time.Time
	ClaimToken       string
	VerificationCode string
	// Owner is the X handle that claimed the agent ("" if none).
	Owner string
	// HumanOwner is the first dashboard user linked to the agent
	// (user_agents), "" if none.
	HumanOwner  string
	IsVetted    bool
	IdentityMD  string
	Provisioned bool // metadata.provisioned_public_ai
	// HasPoAWPass and HasIdentityPass say whether evaluation_results
	// holds a pass of poaw and of identity-check for the agent.
	HasPoAWPass, HasIdentityPass bool
}

// Result is a row of SafeMolt's evaluation_results, with what the import
// reads of its agent, registration, definition and certification job.
type Result struct {
	ID, RegistrationID, AgentID, EvaluationID string
	Passed                                    bool
	Score, MaxScore                           *float64
	// ResultData is the result_data JSON ("" when NULL).
	ResultData      string
	CompletedAt     time.Time
	ProctorAgentID  string
	ProctorFeedback string
	// Version is evaluation_version ("" when NULL).
	Version string

	AgentFound              bool
	AgentProvisioned        bool
	RegistrationFound       bool
	RegisteredAt, StartedAt time.Time
	// DefinitionVersion is the definition's version ("" when there is no
	// definition row).
	DefinitionVersion string
	// JudgeModel and TranscriptSHA256 come from the newest certification
	// job of the registration ("" when none).
	JudgeModel, TranscriptSHA256 string
}

// Session is a row of SafeMolt's evaluation_sessions, with the newest
// result of its registration and its participants.
type Session struct {
	ID, EvaluationID, Kind, Status string
	StartedAt                      time.Time
	// EndedAt is zero when NULL.
	EndedAt        time.Time
	RegistrationID string
	// Result is the newest result of the registration (nil when none),
	// with what MapResult reads to decide whether it is imported.
	Result       *Result
	Participants []SessionParticipant
}

// SessionParticipant is a row of evaluation_session_participants.
type SessionParticipant struct {
	AgentID    string    `json:"agent_id"`
	Role       string    `json:"role"`
	JoinedAt   time.Time `json:"joined_at"`
	AgentFound bool      `json:"agent_found"`
}

// Message is a row of evaluation_messages.
type Message struct {
	ID, SessionID, SenderID, Role, Content string
	CreatedAt                              time.Time
	Sequence                               int64
	SessionFound                           bool
}

// MessageKey is where a page of messages starts: messages come by
// session, sequence and id, so an import numbers each session's messages
// in one pass.
type MessageKey struct {
	SessionID string
	Sequence  int64
	ID        string
}

// Job is a row of certification_jobs, with the newest result of its
// registration.
type Job struct {
	ID, RegistrationID, AgentID, EvaluationID, Status string
	// Transcript is the transcript JSON ("" when NULL).
	Transcript string
	CreatedAt  time.Time
	// SubmittedAt and JudgedAt are zero when NULL.
	SubmittedAt, JudgedAt time.Time
	// Newest reports whether it is the registration's newest job (the one
	// whose digest and judge model the result's details name).
	Newest bool
	// Result is the newest result of the registration (nil when none).
	Result *Result
}

// Reader reads a SafeMolt database in pages, by id.
type Reader interface {
	// Agents returns up to limit agents with ids after after, by id.
	Agents(ctx context.Context, after string, limit int) ([]Agent, error)
	// Results returns up to limit results with ids after after, by id.
	Results(ctx context.Context, after string, limit int) ([]Result, error)
	// Sessions returns up to limit sessions with ids after after, by id.
	Sessions(ctx context.Context, after string, limit int) ([]Session, error)
	// Messages returns up to limit messages after after, by session,
	// sequence and id.
	Messages(ctx context.Context, after MessageKey, limit int) ([]Message, error)
	// Jobs returns up to limit certification jobs with ids after after,
	// by id.
	Jobs(ctx context.Context, after string, limit int) ([]Job, error)
	// Tables counts the rows of each table the import knows; a missing
	// table is left out.
	Tables(ctx context.Context) (map[string]int, error)
}

// Source reads SafeMolt's PostgreSQL database. Columns that later
// migrations added (is_vetted, identity_md, points_earned,
// evaluation_version) and tables that came later (user_agents,
// certification_jobs) may be missing: they read as empty.
type Source struct {
	pool *pgxpool.Pool
	has  map[string]bool // "table" and "table.column"
}

// Tables is every table of SafeMolt's the import reads or reports on.
var Tables = []string{"agents", "human_users", "user_agents", "evaluation_definitions", "evaluation_registrations",
	"evaluation_results", "certification_jobs", "evaluation_sessions", "evaluation_session_participants", "evaluation_messages"}

// Open connects to a SafeMolt database (read only: every statement runs
// in a read-only transaction).
func Open(ctx context.Context, url string) (*Source, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("safemolt: the source URL: %w", err)
	}
	cfg.MaxConns = 2
	cfg.ConnConfig.RuntimeParams["default_transaction_read_only"] = "on"
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("safemolt: %w", err)
	}
	s := &Source{pool: pool, has: map[string]bool{}}
	rows, err := pool.Query(ctx, `SELECT table_name, column_name FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = ANY($1)`, Tables)
	if err != nil {
		pool.Close()
		return nil, fmt.Errorf("safemolt: reading the schema: %w", err)
	}
	for rows.Next() {
		var t, c string
		if err := rows.Scan(&t, &c); err != nil {
			rows.Close()
			pool.Close()
			return nil, err
		}
		s.has[t], s.has[t+"."+c] = true, true
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		pool.Close()
		return nil, err
	}
	for _, need := range []string{"agents", "evaluation_results"} {
		if !s.has[need] {
			pool.Close()
			return nil, fmt.Errorf("safemolt: the source has no %s table in schema search_path: is it a SafeMolt database?", need)
		}
	}
	return s, nil
}

// Close closes the connections.
func (s *Source) Close() { s.pool.Close() }

// col is the column's expression when the table has it, else its empty
// value.
func (s *Source) col(table, alias, column, empty string) string {
	if s.has[table+"."+column] {
		return alias + "." + column
	}
	return empty
}

// Agents returns up to limit agents with ids after after, by id. The
// page is cut before anything is joined to it, so a page costs the same
// however far into the table it is.
func (s *Source) Agents(ctx context.Context, after string, limit int) ([]Agent, error) {
	human := "''"
	if s.has["user_agents"] {
		human = "COALESCE((SELECT ua.user_id FROM user_agents ua WHERE ua.agent_id = a.id ORDER BY ua.linked_at, ua.user_id LIMIT 1), '')"
	}
	q := fmt.Sprintf(`SELECT a.id, a.name, COALESCE(a.description, ''), COALESCE(a.api_key, ''), COALESCE(a.is_claimed, false), a.created_at,
			COALESCE(%s, ''), COALESCE(%s, ''), COALESCE(%s, ''), %s, COALESCE(%s, false), COALESCE(%s, ''),
			COALESCE(%s, '') = 'true',
			COALESCE((SELECT true FROM evaluation_results r WHERE r.agent_id = a.id AND r.evaluation_id = 'poaw' AND r.passed LIMIT 1), false),
			COALESCE((SELECT true FROM evaluation_results r WHERE r.agent_id = a.id AND r.evaluation_id = 'identity-check' AND r.passed LIMIT 1), false)
		FROM (SELECT * FROM agents WHERE id > $1 ORDER BY id LIMIT $2) a ORDER BY a.id`,
		s.col("agents", "a", "claim_token", "NULL"), s.col("agents", "a", "verification_code", "NULL"), s.col("agents", "a", "owner", "NULL"),
		human, s.col("agents", "a", "is_vetted", "NULL::boolean"), s.col("agents", "a", "identity_md", "NULL"),
		strings.Replace(s.col("agents", "a", "metadata", "NULL"), "a.metadata", "a.metadata->>'provisioned_public_ai'", 1))
	rows, err := s.pool.Query(ctx, q, after, limit)
	if err != nil {
		return nil, fmt.Errorf("safemolt: reading agents: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Agent, error) {
		var a Agent
		err := row.Scan(&a.ID, &a.Name, &a.Description, &a.APIKey, &a.IsClaimed, &a.CreatedAt, &a.ClaimToken, &a.VerificationCode,
			&a.Owner, &a.HumanOwner, &a.IsVetted, &a.IdentityMD, &a.Provisioned, &a.HasPoAWPass, &a.HasIdentityPass)
		return a, err
	})
}

// Results returns up to limit results with ids after after, by id. Each
// row's agent, registration and job are looked up by index (LATERAL …
// LIMIT 1, which the planner does not turn into a join over the whole
// table), so a page costs the same however large the tables.
func (s *Source) Results(ctx context.Context, after string, limit int) ([]Result, error) {
	job := "'', ''"
	if s.has["certification_jobs"] {
		job = `COALESCE(j.judge_model, ''), COALESCE(encode(sha256(convert_to(j.transcript::text, 'UTF8')), 'hex'), '')`
	}
	jobJoin := ""
	if s.has["certification_jobs"] {
		jobJoin = `LEFT JOIN LATERAL (SELECT cj.judge_model, cj.transcript FROM certification_jobs cj
			WHERE cj.registration_id = r.registration_id ORDER BY cj.created_at DESC, cj.id DESC LIMIT 1) j ON true`
	}
	defJoin, defVersion := "", "''"
	if s.has["evaluation_definitions"] {
		defJoin, defVersion = "LEFT JOIN evaluation_definitions d ON d.id = r.evaluation_id", "COALESCE(d.version, '')"
	}
	regJoin, regCols := "", "false, NULL::timestamptz, NULL::timestamptz"
	if s.has["evaluation_registrations"] {
		regJoin = `LEFT JOIN LATERAL (SELECT g.id, g.registered_at, g.started_at FROM evaluation_registrations g
			WHERE g.id = r.registration_id LIMIT 1) g ON true`
		regCols = "g.id IS NOT NULL, g.registered_at, g.started_at"
	}
	provisioned := "false"
	if s.has["agents.metadata"] {
		provisioned = "COALESCE(a.metadata->>'provisioned_public_ai', '') = 'true'"
	}
	q := fmt.Sprintf(`SELECT r.id, r.registration_id, r.agent_id, r.evaluation_id, r.passed, r.score::float8, r.max_score::float8,
			COALESCE(r.result_data::text, ''), r.completed_at, COALESCE(%s, ''), COALESCE(%s, ''), COALESCE(%s, ''),
			a.id IS NOT NULL, %s, %s, %s, %s
		FROM (SELECT * FROM evaluation_results WHERE id > $1 ORDER BY id LIMIT $2) r
			LEFT JOIN LATERAL (SELECT * FROM agents a WHERE a.id = r.agent_id LIMIT 1) a ON true %s %s %s
		ORDER BY r.id`,
		s.col("evaluation_results", "r", "proctor_agent_id", "NULL"), s.col("evaluation_results", "r", "proctor_feedback", "NULL"),
		s.col("evaluation_results", "r", "evaluation_version", "NULL"), provisioned, regCols, defVersion, job, regJoin, defJoin, jobJoin)
	rows, err := s.pool.Query(ctx, q, after, limit)
	if err != nil {
		return nil, fmt.Errorf("safemolt: reading results: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Result, error) {
		var r Result
		var registered, started *time.Time
		err := row.Scan(&r.ID, &r.RegistrationID, &r.AgentID, &r.EvaluationID, &r.Passed, &r.Score, &r.MaxScore, &r.ResultData, &r.CompletedAt,
			&r.ProctorAgentID, &r.ProctorFeedback, &r.Version, &r.AgentFound, &r.AgentProvisioned, &r.RegistrationFound, &registered, &started,
			&r.DefinitionVersion, &r.JudgeModel, &r.TranscriptSHA256)
		if registered != nil {
			r.RegisteredAt = *registered
		}
		if started != nil {
			r.StartedAt = *started
		}
		return r, err
	})
}

// Tables counts the rows of each table the import knows.
func (s *Source) Tables(ctx context.Context) (map[string]int, error) {
	out := map[string]int{}
	for _, t := range Tables {
		if !s.has[t] {
			continue
		}
		var n int
		if err := s.pool.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{t}.Sanitize()).Scan(&n); err != nil {
			return nil, fmt.Errorf("safemolt: counting %s: %w", t, err)
		}
		out[t] = n
	}
	return out, nil
}

// resultOf is the LATERAL join of a row's registration to its newest
// result, with what MapResult reads to decide whether the result is
// imported; registration is the column naming the registration.
func (s *Source) resultOf(registration string) (join, cols string) {
	def := "''"
	if s.has["evaluation_definitions"] {
		def = "COALESCE((SELECT d.version FROM evaluation_definitions d WHERE d.id = r.evaluation_id), '')"
	}
	join = `LEFT JOIN LATERAL (SELECT * FROM evaluation_results r WHERE r.registration_id = ` + registration +
		` ORDER BY r.completed_at DESC, r.id DESC LIMIT 1) r ON true`
	cols = fmt.Sprintf(`r.id IS NOT NULL, COALESCE(r.id, ''), COALESCE(r.registration_id, ''), COALESCE(r.agent_id, ''), COALESCE(r.evaluation_id, ''),
		r.completed_at, COALESCE(%s, ''), EXISTS (SELECT 1 FROM agents a WHERE a.id = r.agent_id), %s`,
		s.col("evaluation_results", "r", "evaluation_version", "NULL"), def)
	return join, cols
}

// scanResultOf scans resultOf's columns into a Result (nil when none).
func scanResultOf(dest []any, fn func(...any) error) (*Result, error) {
	var r Result
	var found bool
	var completed *time.Time
	if err := fn(append(dest, &found, &r.ID, &r.RegistrationID, &r.AgentID, &r.EvaluationID, &completed, &r.Version, &r.AgentFound, &r.DefinitionVersion)...); err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	if completed != nil {
		r.CompletedAt = *completed
	}
	r.RegistrationFound = true
	return &r, nil
}

// Sessions returns up to limit sessions with ids after after, by id.
func (s *Source) Sessions(ctx context.Context, after string, limit int) ([]Session, error) {
	if !s.has["evaluation_sessions"] {
		return nil, nil
	}
	participants := "'[]'"
	if s.has["evaluation_session_participants"] {
		participants = `COALESCE((SELECT json_agg(json_build_object('agent_id', p.agent_id, 'role', p.role, 'joined_at', p.joined_at,
			'agent_found', EXISTS (SELECT 1 FROM agents a WHERE a.id = p.agent_id)) ORDER BY p.joined_at, p.id)
			FROM evaluation_session_participants p WHERE p.session_id = s.id)::text, '[]')`
	}
	join, cols := s.resultOf("s.registration_id")
	q := fmt.Sprintf(`SELECT s.id, s.evaluation_id, s.kind, COALESCE(s.status, ''), s.started_at, s.ended_at, COALESCE(s.registration_id, ''), %s, %s
		FROM (SELECT * FROM evaluation_sessions WHERE id > $1 ORDER BY id LIMIT $2) s %s ORDER BY s.id`, participants, cols, join)
	rows, err := s.pool.Query(ctx, q, after, limit)
	if err != nil {
		return nil, fmt.Errorf("safemolt: reading sessions: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Session, error) {
		var ss Session
		var started, ended *time.Time
		var ps string
		r, err := scanResultOf([]any{&ss.ID, &ss.EvaluationID, &ss.Kind, &ss.Status, &started, &ended, &ss.RegistrationID, &ps}, row.Scan)
		if err != nil {
			return ss, err
		}
		ss.Result = r
		if started != nil {
			ss.StartedAt = *started
		}
		if ended != nil {
			ss.EndedAt = *ended
		}
		return ss, json.Unmarshal([]byte(ps), &ss.Participants)
	})
}

// Messages returns up to limit messages after after, by session,
// sequence and id (SafeMolt's index on session and sequence serves it).
func (s *Source) Messages(ctx context.Context, after MessageKey, limit int) ([]Message, error) {
	if !s.has["evaluation_messages"] {
		return nil, nil
	}
	session := "false"
	if s.has["evaluation_sessions"] {
		session = "EXISTS (SELECT 1 FROM evaluation_sessions s WHERE s.id = m.session_id)"
	}
	rows, err := s.pool.Query(ctx, fmt.Sprintf(`SELECT m.id, m.session_id, m.sender_agent_id, COALESCE(m.role, ''), COALESCE(m.content, ''), m.created_at, m.sequence, %s
		FROM evaluation_messages m WHERE (m.session_id, m.sequence, m.id) > ($1, $2, $3)
		ORDER BY m.session_id, m.sequence, m.id LIMIT $4`, session), after.SessionID, after.Sequence, after.ID, limit)
	if err != nil {
		return nil, fmt.Errorf("safemolt: reading messages: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Message, error) {
		var m Message
		err := row.Scan(&m.ID, &m.SessionID, &m.SenderID, &m.Role, &m.Content, &m.CreatedAt, &m.Sequence, &m.SessionFound)
		return m, err
	})
}

// Jobs returns up to limit certification jobs with ids after after, by
// id.
func (s *Source) Jobs(ctx context.Context, after string, limit int) ([]Job, error) {
	if !s.has["certification_jobs"] {
		return nil, nil
	}
	join, cols := s.resultOf("j.registration_id")
	q := fmt.Sprintf(`SELECT j.id, j.registration_id, j.agent_id, j.evaluation_id, COALESCE(j.status, ''), COALESCE(j.transcript::text, ''),
			j.created_at, %s, %s,
			NOT EXISTS (SELECT 1 FROM certification_jobs n WHERE n.registration_id = j.registration_id AND (n.created_at, n.id) > (j.created_at, j.id)), %s
		FROM (SELECT * FROM certification_jobs WHERE id > $1 ORDER BY id LIMIT $2) j %s ORDER BY j.id`,
		s.col("certification_jobs", "j", "submitted_at", "NULL::timestamptz"), s.col("certification_jobs", "j", "judge_completed_at", "NULL::timestamptz"), cols, join)
	rows, err := s.pool.Query(ctx, q, after, limit)
	if err != nil {
		return nil, fmt.Errorf("safemolt: reading certification jobs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (Job, error) {
		var j Job
		var submitted, judged *time.Time
		r, err := scanResultOf([]any{&j.ID, &j.RegistrationID, &j.AgentID, &j.EvaluationID, &j.Status, &j.Transcript, &j.CreatedAt, &submitted, &judged, &j.Newest}, row.Scan)
		j.Result = r
		if submitted != nil {
			j.SubmittedAt = *submitted
		}
		if judged != nil {
			j.JudgedAt = *judged
		}
		return j, err
	})
}
