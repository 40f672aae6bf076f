-- +goose Up
-- Statistics count an evaluation's results and its revoked ones from
-- indexes alone, to tell whether figures computed earlier still hold.
CREATE INDEX results_revoked ON results (evaluation_id) WHERE revoked_at IS NOT NULL;

-- +goose Down
DROP INDEX results_revoked;
