-- +goose Up
-- Judging jobs: durable, leased by workers on any replica, one per registration.
CREATE TABLE jobs (
    id                TEXT    PRIMARY KEY,
    registration_id   TEXT    NOT NULL UNIQUE REFERENCES registrations (id),
    agent_id          TEXT    NOT NULL REFERENCES agents (id),
    evaluation_id     TEXT    NOT NULL REFERENCES sips (id),
    status            TEXT    NOT NULL CHECK (status IN ('pending', 'submitted', 'judging', 'completed', 'failed', 'expired')),
    nonce             TEXT    NOT NULL DEFAULT '',
    nonce_expires_at  TEXT,
    submission        BLOB,
    partial           BLOB,
    attempts          INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at   TEXT,
    lease_until       TEXT,
    last_error        TEXT    NOT NULL DEFAULT '',
    result_id         TEXT    REFERENCES results (id),
    created_at        TEXT    NOT NULL,
    updated_at        TEXT    NOT NULL,
    CHECK (status <> 'completed' OR result_id IS NOT NULL)
);
CREATE INDEX jobs_queue ON jobs (status, next_attempt_at);
