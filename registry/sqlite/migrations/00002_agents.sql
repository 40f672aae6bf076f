-- +goose Up
-- Agents. Credentials are stored only as SHA-256 hashes: the API key is
-- found by its public key_id and compared by hash in constant time.
CREATE TABLE agents (
    id                 TEXT    PRIMARY KEY,
    name               TEXT    NOT NULL CHECK (length(name) BETWEEN 3 AND 32 AND name NOT GLOB '*[^A-Za-z0-9_-]*'),
    name_key           TEXT    NOT NULL UNIQUE CHECK (name_key = lower(name)),
    description        TEXT    NOT NULL DEFAULT '' CHECK (length(CAST(description AS BLOB)) <= 500),
    key_id             TEXT    NOT NULL UNIQUE CHECK (length(key_id) = 12),
    key_hash           TEXT    NOT NULL CHECK (length(key_hash) = 64),
    claim_token_hash   TEXT    NOT NULL UNIQUE CHECK (length(claim_token_hash) = 64),
    verification_code  TEXT    NOT NULL,
    owner              TEXT    NOT NULL DEFAULT '',
    claimed_at         TEXT,
    identity_md        TEXT    NOT NULL DEFAULT '' CHECK (length(CAST(identity_md AS BLOB)) <= 10240),
    results_public     INTEGER NOT NULL DEFAULT 1 CHECK (results_public IN (0, 1)),
    created_at         TEXT    NOT NULL,
    CHECK ((owner = '') = (claimed_at IS NULL))
);

-- +goose StatementBegin
CREATE TRIGGER agents_kept BEFORE DELETE ON agents
BEGIN
    SELECT RAISE(ABORT, 'agents are never deleted');
END;
-- +goose StatementEnd
