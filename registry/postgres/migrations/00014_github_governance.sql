-- +goose Up
-- The epoch counts the removals of repositories the App has processed
-- (one row). A listing of an installation's repositories is written only
-- under the epoch read before GitHub was asked, so a listing older than a
-- removal cannot bring the removed repository back, under any
-- installation.
CREATE TABLE github_repository_epoch (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    epoch  BIGINT  NOT NULL DEFAULT 0 CHECK (epoch >= 0)
);
INSERT INTO github_repository_epoch (id, epoch) VALUES (1, 0);

-- Where the default branch of a repository stands against its policy:
-- the first commit on it that the policy would have refused and that is
-- not resolved (reverted, or overridden), which the registry does not
-- sync, and the issue the App keeps about it.
CREATE TABLE github_verifications (
    repo_id     BIGINT  PRIMARY KEY,
    refused     TEXT    NOT NULL DEFAULT '',
    missing     TEXT    NOT NULL DEFAULT '',
    issue       INTEGER NOT NULL DEFAULT 0,
    updated_at  TIMESTAMPTZ NOT NULL
);

-- Overrides on record: who overrode the policy for which commit or pull
-- request, why and when. The comment that asked is unique, so a replayed
-- or edited comment records nothing twice.
CREATE TABLE github_overrides (
    comment_id  BIGINT  PRIMARY KEY,
    repo_id     BIGINT  NOT NULL,
    subject     TEXT    NOT NULL CHECK (subject <> ''),
    by_login    TEXT    NOT NULL CHECK (by_login <> ''),
    reason      TEXT    NOT NULL CHECK (reason <> ''),
    at          TIMESTAMPTZ NOT NULL
);
CREATE INDEX github_overrides_subject ON github_overrides (repo_id, subject);

-- +goose Down
DROP TABLE github_overrides;
DROP TABLE github_verifications;
DROP TABLE github_repository_epoch;
