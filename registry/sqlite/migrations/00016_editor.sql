-- +goose Up
-- The contribution editor: browser sessions of people signed in with
-- GitHub (and sign-ins under way), found by the SHA-256 of the value the
-- browser holds; the GitHub token is stored encrypted by the server's
-- session key, never in plain text. And the drafts people save.
CREATE TABLE editor_sessions (
    id_hash    TEXT PRIMARY KEY,
    login      TEXT NOT NULL,
    token      BLOB,
    created_at TEXT NOT NULL,
    expires_at TEXT NOT NULL
);
CREATE INDEX editor_sessions_expires ON editor_sessions (expires_at);

CREATE TABLE editor_drafts (
    id         TEXT PRIMARY KEY,
    login      TEXT NOT NULL,
    title      TEXT NOT NULL,
    mode       TEXT NOT NULL,
    edit       TEXT NOT NULL,
    content    TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX editor_drafts_login ON editor_drafts (login, updated_at);

-- +goose Down
DROP TABLE editor_drafts;
DROP TABLE editor_sessions;
