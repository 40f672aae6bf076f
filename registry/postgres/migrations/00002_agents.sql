-- +goose Up
-- Agents. Credentials are stored only as SHA-256 hashes: the API key is
-- found by its public key_id and compared by hash in constant time.
CREATE TABLE agents (
    id                 TEXT        PRIMARY KEY,
    name               TEXT        NOT NULL CHECK (name ~ '^[A-Za-z0-9_-]{3,32}$'),
    name_key           TEXT        NOT NULL UNIQUE CHECK (name_key = lower(name)),
    description        TEXT        NOT NULL DEFAULT '' CHECK (octet_length(description) <= 500),
    key_id             TEXT        NOT NULL UNIQUE CHECK (length(key_id) = 12),
    key_hash           TEXT        NOT NULL CHECK (length(key_hash) = 64),
    claim_token_hash   TEXT        NOT NULL UNIQUE CHECK (length(claim_token_hash) = 64),
    verification_code  TEXT        NOT NULL,
    owner              TEXT        NOT NULL DEFAULT '',
    claimed_at         TIMESTAMPTZ,
    identity_md        TEXT        NOT NULL DEFAULT '' CHECK (octet_length(identity_md) <= 10240),
    results_public     BOOLEAN     NOT NULL DEFAULT true,
    created_at         TIMESTAMPTZ NOT NULL,
    CHECK ((owner = '') = (claimed_at IS NULL))
);

CREATE TRIGGER agents_kept BEFORE DELETE ON agents
    FOR EACH ROW EXECUTE FUNCTION registry_refuse('agents are never deleted');
