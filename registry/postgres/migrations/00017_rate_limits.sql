-- +goose Up
-- Rate limits every replica shares: requests counted per limit and key
-- (a client address, an agent, a session) in fixed windows. Counts are
-- worth nothing after their window, so the table is unlogged (no WAL; it
-- empties after a crash, which forgives at most one window) and expired
-- rows are swept.
CREATE UNLOGGED TABLE rate_limit_hits (
    key          TEXT NOT NULL,
    window_start TIMESTAMPTZ NOT NULL,
    n            BIGINT NOT NULL,
    expires_at   TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (key, window_start)
);
CREATE INDEX rate_limit_hits_expires ON rate_limit_hits (expires_at);

-- +goose Down
DROP TABLE rate_limit_hits;
