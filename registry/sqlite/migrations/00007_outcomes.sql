-- +goose Up
-- Every attempt that was started ends in a stored outcome: passed, failed,
-- expired, cancelled, not_graded or infrastructure_failure. Results made
-- before kept only passed; a failed one whose record says timeout expired.
ALTER TABLE results ADD COLUMN outcome TEXT NOT NULL DEFAULT 'failed'
    CHECK (outcome IN ('passed', 'failed', 'expired', 'cancelled', 'not_graded', 'infrastructure_failure'));
UPDATE results SET outcome = 'passed' WHERE passed = 1;
UPDATE results SET outcome = 'expired' WHERE passed = 0 AND json_extract(trace, '$.status') = 'timeout';
CREATE INDEX results_outcomes ON results (evaluation_id, outcome);
