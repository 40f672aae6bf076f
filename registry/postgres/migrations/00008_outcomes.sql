-- +goose Up
-- Every attempt that was started ends in a stored outcome: passed, failed,
-- expired, cancelled, not_graded or infrastructure_failure. Results made
-- before kept only passed; a failed one whose record says timeout expired.
ALTER TABLE results ADD COLUMN outcome TEXT NOT NULL DEFAULT 'failed'
    CHECK (outcome IN ('passed', 'failed', 'expired', 'cancelled', 'not_graded', 'infrastructure_failure'));
UPDATE results SET outcome = 'passed' WHERE passed;
UPDATE results SET outcome = 'expired' WHERE NOT passed AND trace->>'status' = 'timeout';
ALTER TABLE results ADD CONSTRAINT results_outcome_passed CHECK (passed = (outcome = 'passed'));
CREATE INDEX results_outcomes ON results (evaluation_id, outcome);

-- +goose Down
DROP INDEX results_outcomes;
ALTER TABLE results DROP CONSTRAINT results_outcome_passed;
ALTER TABLE results DROP COLUMN outcome;
