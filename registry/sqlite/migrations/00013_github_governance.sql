-- +goose Up
-- The epoch counts the removals of repositories the App has processed
-- (one row). A listing of an installation's repositories is written only
-- under the epoch read before GitHub was asked, so a listing older than a
-- removal cannot bring the removed repository back, under any
-- installation.
CREATE TABLE github_repository_epoch (
    id     INTEGER PRIMARY KEY CHECK (id = 1),
    epoch  INTEGER NOT NULL DEFAULT 0 CHECK (epoch >= 0)
);
INSERT INTO github_repository_epoch (id, epoch) VALUES (1, 0);

-- +goose Down
DROP TABLE github_repository_epoch;
