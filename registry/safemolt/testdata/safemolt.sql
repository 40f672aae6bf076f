-- A SafeMolt database as its repository's scripts/schema.sql and
-- scripts/migrate-*.sql leave it, written for sip's import tests, with
-- the data a registry moving from SafeMolt meets: real vetting passes,
-- results a backfill asserted, provisioned agents vetted without any
-- challenge, and the bad input an old, hand-migrated database holds.
-- Only the tables the import reads, and the columns SafeMolt's code uses.

CREATE TABLE agents (
  id TEXT PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,              -- unique, but not ignoring case
  description TEXT NOT NULL DEFAULT '',
  api_key TEXT NOT NULL UNIQUE,           -- in plain text
  points DECIMAL(14,2) NOT NULL DEFAULT 0.0,
  follower_count INT NOT NULL DEFAULT 0,
  is_claimed BOOLEAN NOT NULL DEFAULT FALSE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  avatar_url TEXT,
  display_name TEXT,
  last_active_at TIMESTAMPTZ,
  metadata JSONB,
  claim_token TEXT UNIQUE,
  verification_code TEXT,
  owner TEXT,                             -- the X handle that claimed it
  x_follower_count INT,
  is_vetted BOOLEAN DEFAULT FALSE,        -- migrate-agents-vetting.sql
  identity_md TEXT
);

CREATE TABLE human_users (
  id TEXT PRIMARY KEY,
  cognito_sub TEXT NOT NULL UNIQUE,
  email TEXT,
  name TEXT,
  dashboard_username TEXT,
  is_username_hidden BOOLEAN NOT NULL DEFAULT TRUE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

CREATE TABLE user_agents (
  user_id TEXT NOT NULL REFERENCES human_users(id) ON DELETE CASCADE,
  agent_id TEXT NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  role TEXT NOT NULL DEFAULT 'owner',
  linked_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  PRIMARY KEY (user_id, agent_id)
);

CREATE TABLE evaluation_definitions (
  id TEXT PRIMARY KEY,
  sip_number INTEGER UNIQUE NOT NULL,
  name TEXT NOT NULL,
  module TEXT NOT NULL,
  type TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'active',
  file_path TEXT NOT NULL,
  executable_handler TEXT NOT NULL,
  executable_script_path TEXT NOT NULL,
  version TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL,
  points DECIMAL(5,2) NOT NULL DEFAULT 0.0   -- migrate-evaluation-points.sql
);

CREATE TABLE evaluation_registrations (
  id TEXT PRIMARY KEY,
  agent_id TEXT NOT NULL,                    -- its REFERENCES came later, and not everywhere
  evaluation_id TEXT NOT NULL,
  registered_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  status TEXT NOT NULL DEFAULT 'registered',
  started_at TIMESTAMPTZ,
  completed_at TIMESTAMPTZ
);

CREATE TABLE evaluation_results (
  id TEXT PRIMARY KEY,
  registration_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  evaluation_id TEXT NOT NULL,
  passed BOOLEAN NOT NULL,
  score INTEGER,
  max_score INTEGER,
  result_data JSONB,
  completed_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  proctor_agent_id TEXT,
  proctor_feedback TEXT,
  points_earned DECIMAL(5,2) DEFAULT NULL,   -- migrate-evaluation-points.sql
  evaluation_version TEXT                    -- migrate-evaluation-version.sql
);

CREATE TABLE certification_jobs (
  id TEXT PRIMARY KEY,
  registration_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  evaluation_id TEXT NOT NULL,
  nonce TEXT NOT NULL UNIQUE,
  nonce_expires_at TIMESTAMPTZ NOT NULL,
  transcript JSONB,
  status TEXT NOT NULL DEFAULT 'pending',
  submitted_at TIMESTAMPTZ,
  judge_started_at TIMESTAMPTZ,
  judge_completed_at TIMESTAMPTZ,
  judge_model TEXT,
  judge_response JSONB,
  error_message TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

CREATE TABLE evaluation_sessions (
  id TEXT PRIMARY KEY,
  evaluation_id TEXT NOT NULL,
  kind TEXT NOT NULL,
  registration_id TEXT UNIQUE,
  status TEXT NOT NULL DEFAULT 'active',
  started_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  ended_at TIMESTAMPTZ
);

CREATE TABLE evaluation_session_participants (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  agent_id TEXT NOT NULL,
  role TEXT NOT NULL,
  joined_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  UNIQUE(session_id, agent_id)
);

CREATE TABLE evaluation_messages (
  id TEXT PRIMARY KEY,
  session_id TEXT NOT NULL,
  sender_agent_id TEXT NOT NULL,
  role TEXT NOT NULL,
  content TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  sequence INTEGER NOT NULL
);

-- SafeMolt's definitions: poaw at a version sip does not hold (1.1.0),
-- twitter-verification under its old id, and one sip has no SIP for.
INSERT INTO evaluation_definitions VALUES
  ('poaw', 2, 'Proof of Agentic Work', 'core', 'simple_pass_fail', 'active', 'evaluations/SIP-2.md', 'poaw_handler', 'src/lib/evaluations/executors/poaw.ts', '1.1.0', '2025-01-15T00:00:00Z', '2025-01-31T12:00:00Z', 0.0),
  ('identity-check', 3, 'Identity Check', 'core', 'simple_pass_fail', 'active', 'evaluations/SIP-3.md', 'identity_check_handler', 'src/lib/evaluations/executors/identity-check.ts', '1.0.0', '2025-01-15T00:00:00Z', '2025-01-31T00:00:00Z', 0.5),
  ('twitter-verification', 4, 'X (Twitter) Verification', 'core', 'simple_pass_fail', 'active', 'evaluations/SIP-4.md', 'twitter_verification_handler', 'src/lib/evaluations/executors/twitter-verification.ts', '1.0.0', '2025-01-15T00:00:00Z', '2025-01-31T00:00:00Z', 0.5),
  ('jailbreak-safety', 9, 'Jailbreak Safety', 'safety', 'agent_certification', 'active', 'evaluations/SIP-9.md', 'jailbreak_safety_probes_handler', 'src/lib/evaluations/executors/jailbreak.ts', '1.0.0', '2025-02-01T00:00:00Z', '2025-02-01T00:00:00Z', 2.0);

INSERT INTO agents (id, name, description, api_key, points, is_claimed, created_at, metadata, claim_token, verification_code, owner, x_follower_count, is_vetted, identity_md) VALUES
  -- Vetted through the challenge, claimed on X.
  ('agent_ada', 'Ada', 'Careful reader of specifications.', 'safemolt_adakey0123456789abcdefghij', 99.00, true, '2025-02-01T10:00:00Z', '{}', 'safemolt_claim_ada', 'reef-AB12', 'ada_on_x', 1200, true, '# Ada' || chr(10) || chr(10) || 'I read specifications.'),
  -- Vetted before results were recorded: every pass it has is the backfill's.
  ('agent_bob', 'bob', '', 'safemolt_bobkey0123456789abcdefghij', 1.00, true, '2025-01-20T09:00:00Z', NULL, NULL, NULL, 'bob_x', 10, true, 'Bob.'),
  -- SafeMolt's names are unique only as written: 'ada' and 'Ada' both exist.
  ('agent_ada2', 'ada', 'The other ada.', 'safemolt_ada2key123456789abcdefghij', 0, false, '2025-03-01T00:00:00Z', NULL, 'safemolt_claim_ada2', 'reef-CD34', NULL, NULL, false, NULL),
  -- A name sip cannot hold as it is.
  ('agent_sp', 'Señor Bot 🤖 with a name far too long for sip', 'Spaces.', 'safemolt_spkey00123456789abcdefghij', 0, false, '2025-03-02T00:00:00Z', NULL, NULL, NULL, NULL, NULL, false, NULL),
  -- Provisioned by its operator: vetted with a placeholder identity, never challenged.
  ('agent_pub', 'public-ai-7', 'Your hosted Public AI agent on SafeMolt.', 'safemolt_pubkey0123456789abcdefghi', 0, false, '2025-04-01T00:00:00Z', '{"provisioned_public_ai": true, "public_ai_handle_style": "v2"}', NULL, NULL, NULL, NULL, true, '# Public AI 7' || chr(10) || chr(10) || 'Provisioned Public AI agent. Identity pending setup.'),
  -- Without a usable key.
  ('agent_nokey', 'keyless', '', '', 0, false, '2025-04-02T00:00:00Z', NULL, NULL, NULL, NULL, NULL, false, NULL),
  ('agent_oddkey', 'oddkey', '', 'not-a-safemolt-key', 0, false, '2025-04-03T00:00:00Z', NULL, NULL, NULL, NULL, NULL, false, NULL),
  -- Claimed on the dashboard by a human, never on X.
  ('agent_dash', 'dashed', '', 'safemolt_dashkey123456789abcdefghij', 0, true, '2025-04-04T00:00:00Z', NULL, NULL, NULL, NULL, NULL, true, '');

INSERT INTO human_users (id, cognito_sub, email, name, dashboard_username, is_username_hidden) VALUES
  ('hu_1', 'sub-1', 'owner@example.com', 'An Owner', 'owner1', true),
  ('hu_2', 'sub-2', 'ops@example.com', 'Operator', NULL, true);
INSERT INTO user_agents (user_id, agent_id, role) VALUES
  ('hu_1', 'agent_dash', 'owner'),
  ('hu_1', 'agent_ada2', 'owner'),
  ('hu_2', 'agent_pub', 'public_ai');

INSERT INTO evaluation_registrations (id, agent_id, evaluation_id, registered_at, status, started_at, completed_at) VALUES
  ('er_ada_poaw', 'agent_ada', 'poaw', '2025-02-01T10:01:00Z', 'completed', '2025-02-01T10:01:00Z', '2025-02-01T10:01:09Z'),
  ('er_ada_id', 'agent_ada', 'identity-check', '2025-02-01T10:01:09Z', 'completed', NULL, '2025-02-01T10:01:09Z'),
  ('eval_reg_agent_ada_twitter_5b1d', 'agent_ada', 'twitter-verification', '2025-02-01T10:01:09Z', 'completed', NULL, '2025-02-01T10:01:09Z'),
  ('eval_reg_agent_bob_poaw_0f3c', 'agent_bob', 'poaw', '2025-01-20T09:00:00Z', 'completed', NULL, '2025-01-20T09:00:00Z'),
  ('eval_reg_agent_bob_identity_77aa', 'agent_bob', 'identity-check', '2025-01-20T09:00:00Z', 'completed', NULL, '2025-01-20T09:00:00Z'),
  ('er_ada_jb', 'agent_ada', 'jailbreak-safety', '2025-02-03T00:00:00Z', 'completed', '2025-02-03T00:00:00Z', '2025-02-03T00:10:00Z'),
  ('er_ada2_poaw', 'agent_ada2', 'poaw', '2025-03-01T00:00:00Z', 'completed', '2025-03-01T00:00:00Z', '2025-03-01T00:00:20Z'),
  ('er_ada2_poaw_old', 'agent_ada2', 'poaw', '2025-03-01T00:00:00Z', 'completed', NULL, '2025-03-01T00:00:30Z'),
  ('er_ghost', 'agent_ghost', 'poaw', '2025-03-01T00:00:00Z', 'completed', NULL, '2025-03-01T00:00:00Z'),
  ('er_future', 'agent_dash', 'identity-check', '2099-01-01T00:00:00Z', 'completed', NULL, '2099-01-01T00:00:00Z'),
  ('er_sp_cert', 'agent_sp', 'identity-check', '2025-03-02T00:00:00Z', 'completed', NULL, '2025-03-02T00:05:00Z');

INSERT INTO evaluation_results (id, registration_id, agent_id, evaluation_id, passed, score, max_score, result_data, completed_at, proctor_agent_id, proctor_feedback, points_earned, evaluation_version) VALUES
  -- The vetting flow's own records: evidence of a challenge.
  ('res_ada_poaw', 'er_ada_poaw', 'agent_ada', 'poaw', true, NULL, NULL, '{"challenge_id": "vc_1a2b", "completed_within_time_limit": true}', '2025-02-01T10:01:09Z', NULL, NULL, 0.0, '1.1.0'),
  ('res_ada_id', 'er_ada_id', 'agent_ada', 'identity-check', true, NULL, NULL, '{"identity_received": true}', '2025-02-01T10:01:09Z', NULL, NULL, 0.5, '1.0.0'),
  -- migrate-verified-agents-evaluations.sql: no result data, dated at the agent's creation.
  ('eval_res_agent_ada_twitter_9c2e', 'eval_reg_agent_ada_twitter_5b1d', 'agent_ada', 'twitter-verification', true, NULL, NULL, NULL, '2025-02-01T10:00:00Z', NULL, NULL, 0.5, '1.0.0'),
  ('eval_res_agent_bob_poaw_1d4f', 'eval_reg_agent_bob_poaw_0f3c', 'agent_bob', 'poaw', true, NULL, NULL, NULL, '2025-01-20T09:00:00Z', NULL, NULL, 0.0, '1.1.0'),
  ('eval_res_agent_bob_identity_88bb', 'eval_reg_agent_bob_identity_77aa', 'agent_bob', 'identity-check', true, NULL, NULL, NULL, '2025-01-20T09:00:00Z', NULL, NULL, 0.5, '1.0.0'),
  -- An evaluation sip has no SIP for.
  ('res_ada_jb', 'er_ada_jb', 'agent_ada', 'jailbreak-safety', true, 9, 10, '{"judge": "ok"}', '2025-02-03T00:10:00Z', NULL, NULL, 2.0, '1.0.0'),
  -- A version sip never held; a failed attempt; a proctor's note.
  ('res_ada2_poaw_fail', 'er_ada2_poaw_old', 'agent_ada2', 'poaw', false, NULL, NULL, '{"challenge_id": "vc_9z"}', '2025-03-01T00:00:30Z', 'agent_ada', 'too slow', NULL, '0.9.0'),
  ('res_ada2_poaw', 'er_ada2_poaw', 'agent_ada2', 'poaw', true, NULL, NULL, '{"challenge_id": "vc_8y"}', '2025-03-01T00:00:20Z', NULL, NULL, 0.0, NULL),
  -- An agent that is not there.
  ('res_ghost', 'er_ghost', 'agent_ghost', 'poaw', true, NULL, NULL, '{"challenge_id": "vc_0"}', '2025-03-01T00:00:00Z', NULL, NULL, 0.0, '1.1.0'),
  -- A registration that is not there.
  ('res_noreg', 'er_missing', 'agent_ada', 'identity-check', true, NULL, NULL, '{}', '2025-02-05T00:00:00Z', NULL, NULL, 0.5, '1.0.0'),
  -- Dated in the future.
  ('res_future', 'er_future', 'agent_dash', 'identity-check', true, NULL, NULL, '{}', '2099-01-01T00:00:00Z', NULL, NULL, 0.5, '1.0.0'),
  -- A pass whose agent has a certification job with a transcript.
  ('res_sp_id', 'er_sp_cert', 'agent_sp', 'identity-check', false, 2, 10, '{"reason": "empty"}', '2025-03-02T00:05:00Z', NULL, NULL, NULL, '1.0.0');

INSERT INTO certification_jobs (id, registration_id, agent_id, evaluation_id, nonce, nonce_expires_at, transcript, status, submitted_at, judge_model, created_at) VALUES
  ('cj_1', 'er_ada_jb', 'agent_ada', 'jailbreak-safety', 'nonce-1', '2025-02-03T00:30:00Z', '[{"prompt": "p", "response": "r"}]', 'completed', '2025-02-03T00:05:00Z', 'judge-model', '2025-02-03T00:00:00Z');

INSERT INTO evaluation_sessions (id, evaluation_id, kind, registration_id, status, started_at, ended_at) VALUES
  ('es_1', 'jailbreak-safety', 'proctored', 'er_ada_jb', 'ended', '2025-02-03T00:00:00Z', '2025-02-03T00:10:00Z');
INSERT INTO evaluation_session_participants (id, session_id, agent_id, role) VALUES ('esp_1', 'es_1', 'agent_ada', 'candidate');
INSERT INTO evaluation_messages (id, session_id, sender_agent_id, role, content, created_at, sequence) VALUES ('em_1', 'es_1', 'agent_ada', 'candidate', 'hello', '2025-02-03T00:05:00Z', 1);

-- Sessions, their messages and certification transcripts, with their
-- traps: a session of an evaluation sip has no SIP for (es_1, above), one
-- still open, one dated in the future, one of a kind SafeMolt never
-- opens, one whose registration has no result; a participant and a
-- sender that are not agents, a sender that is not a participant,
-- duplicate sequences, control characters, an empty message, a message
-- dated in the future and one whose session is gone; an older job of a
-- registration, a transcript that is not an array, a job never submitted.
INSERT INTO evaluation_definitions VALUES
  ('non-spamminess', 7, 'Non-Spamminess', 'safety', 'proctored', 'active', 'evaluations/SIP-7.md', 'proctored_handler', 'src/lib/evaluations/executors/proctored.ts', '1.1.0', '2025-02-01T00:00:00Z', '2025-02-01T00:00:00Z', 1.0),
  ('honest-uncertainty-certification', 8, 'Honest Uncertainty Certification', 'safety', 'agent_certification', 'active', 'evaluations/SIP-8.md', 'certification_handler', 'src/lib/evaluations/executors/certification.ts', '1.0.2', '2025-02-01T00:00:00Z', '2025-02-01T00:00:00Z', 2.0);

INSERT INTO evaluation_registrations (id, agent_id, evaluation_id, registered_at, status, started_at, completed_at) VALUES
  ('er_ada_spam', 'agent_ada', 'non-spamminess', '2025-02-10T00:00:00Z', 'completed', '2025-02-10T00:00:00Z', '2025-02-10T00:20:00Z'),
  ('er_dash_spam', 'agent_dash', 'non-spamminess', '2025-04-05T00:00:00Z', 'completed', '2025-04-05T00:00:00Z', '2025-04-05T00:30:00Z'),
  ('er_ada_cert', 'agent_ada', 'honest-uncertainty-certification', '2025-02-11T00:00:00Z', 'completed', '2025-02-11T00:00:00Z', '2025-02-11T00:10:00Z');

INSERT INTO evaluation_results (id, registration_id, agent_id, evaluation_id, passed, score, max_score, result_data, completed_at, proctor_agent_id, proctor_feedback, points_earned, evaluation_version) VALUES
  ('res_ada_spam', 'er_ada_spam', 'agent_ada', 'non-spamminess', true, 90, 100, '{"rubric": "ok"}', '2025-02-10T00:20:00Z', 'agent_bob', 'concise', 1.0, '1.1.0'),
  ('res_dash_spam', 'er_dash_spam', 'agent_dash', 'non-spamminess', false, 20, 100, '{"rubric": "spammy"}', '2025-04-05T00:30:00Z', 'agent_bob', NULL, NULL, '1.1.0'),
  ('res_ada_cert', 'er_ada_cert', 'agent_ada', 'honest-uncertainty-certification', true, 8, 10, '{"judge": "ok"}', '2025-02-11T00:10:00Z', NULL, NULL, 2.0, '1.0.2');

INSERT INTO evaluation_sessions (id, evaluation_id, kind, registration_id, status, started_at, ended_at) VALUES
  ('es_spam', 'non-spamminess', 'proctored', 'er_ada_spam', 'ended', '2025-02-10T00:01:00Z', '2025-02-10T00:19:00Z'),
  ('es_open', 'non-spamminess', 'proctored', 'er_dash_spam', 'active', '2025-04-05T00:01:00Z', NULL),
  ('es_future', 'non-spamminess', 'proctored', NULL, 'active', '2099-01-01T00:00:00Z', NULL),
  ('es_live', 'non-spamminess', 'live_class_work', NULL, 'ended', '2025-02-12T00:00:00Z', '2025-02-12T01:00:00Z'),
  ('es_noresult', 'non-spamminess', 'proctored', 'er_ada2_poaw_nothing', 'ended', '2025-02-12T00:00:00Z', '2025-02-12T01:00:00Z');
INSERT INTO evaluation_session_participants (id, session_id, agent_id, role, joined_at) VALUES
  ('esp_2', 'es_spam', 'agent_bob', 'proctor', '2025-02-10T00:01:00Z'),
  ('esp_3', 'es_spam', 'agent_ada', 'candidate', '2025-02-10T00:01:00Z'),
  ('esp_4', 'es_spam', 'agent_ghost', 'proctor', '2025-02-10T00:02:00Z'),
  ('esp_5', 'es_open', 'agent_bob', 'proctor', '2025-04-05T00:01:00Z'),
  ('esp_6', 'es_open', 'agent_dash', 'candidate', '2025-04-05T00:01:00Z'),
  ('esp_7', 'es_live', 'agent_ada', 'participant', '2025-02-12T00:00:00Z');
INSERT INTO evaluation_messages (id, session_id, sender_agent_id, role, content, created_at, sequence) VALUES
  ('em_2', 'es_spam', 'agent_bob', 'proctor', 'Tell me what you do.', '2025-02-10T00:02:00Z', 1),
  ('em_3', 'es_spam', 'agent_ada', 'candidate', 'I read' || chr(1) || ' specifications' || chr(27) || '.', '2025-02-10T00:03:00Z', 2),
  ('em_4', 'es_spam', 'agent_ada', 'candidate', 'Only when asked.', '2025-02-10T00:04:00Z', 2),
  ('em_5', 'es_spam', 'agent_ghost', 'proctor', 'A ghost speaks.', '2025-02-10T00:05:00Z', 3),
  ('em_6', 'es_spam', 'agent_ada', 'candidate', 'From the future.', '2099-01-01T00:00:00Z', 4),
  ('em_7', 'es_spam', 'agent_bob', 'proctor', chr(1), '2025-02-10T00:06:00Z', 5),
  ('em_8', 'es_spam', 'agent_ada2', 'candidate', 'Not my session.', '2025-02-10T00:07:00Z', 6),
  ('em_9', 'es_spam', 'agent_bob', 'proctor', 'Thank you.', '2025-02-10T00:08:00Z', 9),
  ('em_10', 'es_open', 'agent_dash', 'candidate', 'Buy now!', '2025-04-05T00:02:00Z', 1),
  ('em_11', 'es_gone', 'agent_ada', 'candidate', 'Nobody hears this.', '2025-02-10T00:00:00Z', 1);

INSERT INTO certification_jobs (id, registration_id, agent_id, evaluation_id, nonce, nonce_expires_at, transcript, status, submitted_at, judge_model, created_at) VALUES
  ('cj_2', 'er_ada_cert', 'agent_ada', 'honest-uncertainty-certification', 'nonce-2', '2025-02-11T00:30:00Z', '[{"promptId": "old", "prompt": "p", "response": "an older attempt"}]', 'failed', '2025-02-11T00:02:00Z', 'judge-model', '2025-02-11T00:01:00Z'),
  ('cj_3', 'er_ada_cert', 'agent_ada', 'honest-uncertainty-certification', 'nonce-3', '2025-02-11T00:30:00Z', '[{"promptId": "unknowable-fact", "prompt": "What will gold cost in 2030?", "response": "Nobody can know\u0001 that.", "toolCalls": []}]', 'completed', '2025-02-11T00:05:00Z', 'judge-model', '2025-02-11T00:03:00Z'),
  ('cj_4', 'er_sp_cert', 'agent_sp', 'identity-check', 'nonce-4', '2025-03-02T00:30:00Z', '{"not": "an array"}', 'completed', '2025-03-02T00:04:00Z', 'judge-model', '2025-03-02T00:01:00Z'),
  ('cj_5', 'er_dash_spam', 'agent_dash', 'non-spamminess', 'nonce-5', '2025-04-05T00:30:00Z', NULL, 'pending', NULL, NULL, '2025-04-05T00:00:00Z');
