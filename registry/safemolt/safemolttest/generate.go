// Package safemolttest generates SafeMolt databases of any size for the
// import's benchmark.
package safemolttest

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Size is what Generate makes.
type Size struct {
	// Agents is the number of agents (all vetted, half claimed on X).
	Agents int
	// ResultsPerAgent is the number of results of each agent. Of every
	// hundred results, one is a proctored non-spamminess attempt with its
	// session (a proctor and the candidate) and four messages, one a
	// certification with its job's transcript; of the rest, half are PoAW
	// and half identity checks; a third of all fail.
	ResultsPerAgent int
}

// Results is the number of results of a size.
func (s Size) Results() int { return s.Agents * s.ResultsPerAgent }

// Generate fills a SafeMolt database whose schema exists (the import
// fixture's, say) with SafeMolt's indexes and the rows of size, generated
// by the server (generate_series), so a million rows take a minute, not
// a million round trips. Ids are prefixed "bench" and do not meet the
// fixture's.
func Generate(ctx context.Context, pool *pgxpool.Pool, size Size) error {
	agents, results := size.Agents, size.Results()
	// kind of result i: 0 mod 100 proctored, 50 mod 100 certification,
	// else PoAW (even) or identity check (odd).
	evaluation := `CASE WHEN i % 100 = 0 THEN 'non-spamminess' WHEN i % 100 = 50 THEN 'honest-uncertainty-certification'
		WHEN i % 2 = 0 THEN 'poaw' ELSE 'identity-check' END`
	agent := fmt.Sprintf(`'bench_' || lpad((i %% %d + 1)::text, 7, '0')`, agents)
	proctor := fmt.Sprintf(`'bench_' || lpad(((i + 1) %% %d + 1)::text, 7, '0')`, agents)
	at := `'2025-02-01'::timestamptz + i * interval '1 second'`
	for _, q := range []string{
		// SafeMolt's own indexes (scripts/migrate-*.sql).
		`CREATE INDEX IF NOT EXISTS idx_eval_reg_agent ON evaluation_registrations(agent_id)`,
		`CREATE INDEX IF NOT EXISTS idx_eval_results_agent ON evaluation_results(agent_id)`,
		`CREATE INDEX IF NOT EXISTS idx_eval_results_registration ON evaluation_results(registration_id)`,
		`CREATE INDEX IF NOT EXISTS idx_cert_jobs_registration ON certification_jobs(registration_id)`,
		`CREATE INDEX IF NOT EXISTS idx_eval_sessions_reg ON evaluation_sessions(registration_id)`,
		`CREATE INDEX IF NOT EXISTS idx_eval_sess_part_session ON evaluation_session_participants(session_id)`,
		`CREATE INDEX IF NOT EXISTS idx_eval_messages_session_seq ON evaluation_messages(session_id, sequence)`,
		fmt.Sprintf(`INSERT INTO agents (id, name, description, api_key, is_claimed, created_at, owner, is_vetted, identity_md)
			SELECT 'bench_' || lpad(i::text, 7, '0'), 'bench-' || i, 'A generated agent.', 'safemolt_bench' || lpad(i::text, 12, '0') || 'abcdefgh',
				i %% 2 = 0, '2025-01-01'::timestamptz + i * interval '1 second', CASE WHEN i %% 2 = 0 THEN 'x_' || i END, true, '# Bench ' || i
			FROM generate_series(1, %d) i`, agents),
		fmt.Sprintf(`INSERT INTO evaluation_registrations (id, agent_id, evaluation_id, registered_at, status, started_at, completed_at)
			SELECT 'breg_' || lpad(i::text, 9, '0'), %s, %s, %s, 'completed', %s, %s + interval '5 seconds'
			FROM generate_series(1, %d) i`, agent, evaluation, at, at, at, results),
		fmt.Sprintf(`INSERT INTO evaluation_results (id, registration_id, agent_id, evaluation_id, passed, result_data, completed_at,
				proctor_agent_id, points_earned, evaluation_version)
			SELECT 'bres_' || lpad(i::text, 9, '0'), 'breg_' || lpad(i::text, 9, '0'), %s, %s, i %% 3 <> 0,
				('{"challenge_id": "vc_' || i || '"}')::jsonb, %s + interval '5 seconds',
				CASE WHEN i %% 100 = 0 THEN %s END, 0.5, CASE WHEN i %% 100 = 0 THEN '1.1.0' WHEN i %% 100 = 50 THEN '1.0.2' ELSE '1.0.0' END
			FROM generate_series(1, %d) i`, agent, evaluation, at, proctor, results),
		fmt.Sprintf(`INSERT INTO evaluation_sessions (id, evaluation_id, kind, registration_id, status, started_at, ended_at)
			SELECT 'bses_' || lpad(i::text, 9, '0'), 'non-spamminess', 'proctored', 'breg_' || lpad(i::text, 9, '0'), 'ended', %s, %s + interval '4 seconds'
			FROM generate_series(100, %d, 100) i`, at, at, results),
		fmt.Sprintf(`INSERT INTO evaluation_session_participants (id, session_id, agent_id, role, joined_at)
			SELECT 'bsp_' || lpad(i::text, 9, '0') || r.role, 'bses_' || lpad(i::text, 9, '0'), CASE WHEN r.role = 'proctor' THEN %s ELSE %s END, r.role, %s
			FROM generate_series(100, %d, 100) i, (VALUES ('proctor'), ('candidate')) AS r(role)`, proctor, agent, at, results),
		fmt.Sprintf(`INSERT INTO evaluation_messages (id, session_id, sender_agent_id, role, content, created_at, sequence)
			SELECT 'bmsg_' || lpad(i::text, 9, '0') || '_' || k, 'bses_' || lpad(i::text, 9, '0'), CASE WHEN k %% 2 = 1 THEN %s ELSE %s END,
				CASE WHEN k %% 2 = 1 THEN 'proctor' ELSE 'candidate' END, 'Message ' || k || ' of session ' || i, %s + k * interval '1 second', k
			FROM generate_series(100, %d, 100) i, generate_series(1, 4) k`, proctor, agent, at, results),
		fmt.Sprintf(`INSERT INTO certification_jobs (id, registration_id, agent_id, evaluation_id, nonce, nonce_expires_at, transcript, status, submitted_at, judge_model, created_at)
			SELECT 'bjob_' || lpad(i::text, 9, '0'), 'breg_' || lpad(i::text, 9, '0'), %s, 'honest-uncertainty-certification', 'bnonce_' || i,
				%s + interval '1 hour', ('[{"promptId": "unknowable-fact", "prompt": "What will gold cost in 2030?", "response": "Nobody can know ' || i || '."}]')::jsonb,
				'completed', %s + interval '3 seconds', 'judge-model', %s
			FROM generate_series(50, %d, 100) i`, agent, at, at, at, results),
		`ANALYZE`,
	} {
		if _, err := pool.Exec(ctx, q); err != nil {
			return fmt.Errorf("safemolttest: %w", err)
		}
	}
	return nil
}
