package safemolt

import (
	"context"
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

// Reader reads a SafeMolt database in pages, by id.
type Reader interface {
	// Agents returns up to limit agents with ids after after, by id.
	Agents(ctx context.Context, after string, limit int) ([]Agent, error)
	// Results returns up to limit results with ids after after, by id.
	Results(ctx context.Context, after string, limit int) ([]Result, error)
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
