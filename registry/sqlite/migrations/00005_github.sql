-- +goose Up
-- The GitHub App's durable inbox: every acknowledged webhook delivery is
-- here until it has been processed; done ones are pruned, dead ones kept.
CREATE TABLE deliveries (
    id               TEXT    PRIMARY KEY,
    event            TEXT    NOT NULL,
    action           TEXT    NOT NULL DEFAULT '',
    key              TEXT    NOT NULL DEFAULT '',
    payload          BLOB    NOT NULL,
    status           TEXT    NOT NULL CHECK (status IN ('pending', 'processing', 'done', 'dead')),
    attempts         INTEGER NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    received_at      TEXT    NOT NULL,
    next_attempt_at  TEXT    NOT NULL,
    lease_until      TEXT,
    done_at          TEXT,
    last_error       TEXT    NOT NULL DEFAULT '',
    CHECK (status <> 'processing' OR lease_until IS NOT NULL),
    CHECK (status <> 'done' OR done_at IS NOT NULL)
);
CREATE INDEX deliveries_queue ON deliveries (status, next_attempt_at);
CREATE INDEX deliveries_key ON deliveries (key, status);

-- The repositories the App is installed on, kept by installation events
-- and by reconciliation.
CREATE TABLE github_repositories (
    id               INTEGER PRIMARY KEY,
    installation_id  INTEGER NOT NULL,
    full_name        TEXT    NOT NULL CHECK (full_name LIKE '%_/_%'),
    default_branch   TEXT    NOT NULL DEFAULT '',
    clone_url        TEXT    NOT NULL DEFAULT '',
    active           INTEGER NOT NULL DEFAULT 1 CHECK (active IN (0, 1)),
    updated_at       TEXT    NOT NULL
);
CREATE INDEX github_repositories_installation ON github_repositories (installation_id);
