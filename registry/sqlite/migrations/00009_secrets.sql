-- +goose Up
-- Secrets the server makes for itself once and every process shares, e.g.
-- the key of the digests in execution records. Never shown by any API.
CREATE TABLE secrets (
    name       TEXT PRIMARY KEY,
    secret     BLOB NOT NULL CHECK (length(secret) >= 32),
    created_at TEXT NOT NULL
);
