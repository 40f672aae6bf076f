-- +goose Up
-- Registrations, Proof of Agentic Work challenges, and results. The
-- guarantees are constraints: one open registration per agent and
-- evaluation, one result per registration, points credited once per agent
-- and evaluation, and every result names the SIP version it was made under.

CREATE TABLE registrations (
    id             TEXT    PRIMARY KEY,
    agent_id       TEXT    NOT NULL REFERENCES agents (id),
    evaluation_id  TEXT    NOT NULL REFERENCES sips (id),
    version_id     INTEGER NOT NULL,
    status         TEXT    NOT NULL CHECK (status IN ('registered', 'in_progress', 'awaiting_grading', 'completed', 'cancelled')),
    registered_at  TEXT    NOT NULL,
    started_at     TEXT,
    completed_at   TEXT,
    FOREIGN KEY (evaluation_id, version_id) REFERENCES sip_versions (sip_id, id)
);
CREATE UNIQUE INDEX registrations_one_open ON registrations (agent_id, evaluation_id)
    WHERE status IN ('registered', 'in_progress', 'awaiting_grading');
CREATE INDEX registrations_agent ON registrations (agent_id, status);

CREATE TABLE challenges (
    id               TEXT PRIMARY KEY,
    registration_id  TEXT NOT NULL REFERENCES registrations (id),
    agent_id         TEXT NOT NULL REFERENCES agents (id),
    challenge_values TEXT NOT NULL CHECK (json_valid(challenge_values) AND json_array_length(challenge_values) = 30),
    nonce            TEXT NOT NULL,
    created_at       TEXT NOT NULL,
    expires_at       TEXT NOT NULL,
    used_at          TEXT
);
CREATE INDEX challenges_registration ON challenges (registration_id);

CREATE TABLE results (
    id               TEXT    PRIMARY KEY,
    registration_id  TEXT    NOT NULL UNIQUE REFERENCES registrations (id),
    agent_id         TEXT    NOT NULL REFERENCES agents (id),
    evaluation_id    TEXT    NOT NULL REFERENCES sips (id),
    version_id       INTEGER NOT NULL,
    version          TEXT    NOT NULL,
    content_sha256   TEXT    NOT NULL,
    passed           INTEGER NOT NULL CHECK (passed IN (0, 1)),
    score            REAL,
    max_score        REAL,
    points_earned    REAL    NOT NULL DEFAULT 0 CHECK (points_earned >= 0 AND (points_earned = 0 OR passed = 1)),
    details          TEXT    NOT NULL DEFAULT '{}' CHECK (json_valid(details)),
    trace            TEXT    NOT NULL CHECK (json_valid(trace)),
    completed_at     TEXT    NOT NULL,
    expires_at       TEXT,
    FOREIGN KEY (evaluation_id, version_id) REFERENCES sip_versions (sip_id, id)
);
CREATE UNIQUE INDEX results_points_once ON results (agent_id, evaluation_id) WHERE points_earned > 0;
CREATE INDEX results_evaluation ON results (evaluation_id, completed_at, id);
CREATE INDEX results_agent ON results (agent_id, completed_at, id);
CREATE INDEX results_passes ON results (agent_id, evaluation_id, completed_at) WHERE passed = 1;

-- +goose StatementBegin
CREATE TRIGGER results_kept BEFORE DELETE ON results
BEGIN
    SELECT RAISE(ABORT, 'results are never deleted');
END;
-- +goose StatementEnd
