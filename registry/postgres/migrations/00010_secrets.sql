-- +goose Up
-- Secrets the server makes for itself once and every replica shares, e.g.
-- the key of the digests in execution records. Never shown by any API.
CREATE TABLE secrets (
    name       TEXT PRIMARY KEY,
    secret     BYTEA NOT NULL CHECK (length(secret) >= 32),
    created_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE secrets;
