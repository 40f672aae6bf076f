-- +goose Up
-- Where a result comes from: graded (this registry graded the attempt),
-- imported (another registry graded it and its evidence came along),
-- backfilled (another registry asserted it without evidence) or
-- provisioned (given to an agent its operator provisioned, without any
-- attempt). Results made before are this registry's own: graded.
ALTER TABLE results ADD COLUMN provenance TEXT NOT NULL DEFAULT 'graded'
    CHECK (provenance IN ('graded', 'imported', 'backfilled', 'provisioned'));
CREATE INDEX results_provenance ON results (evaluation_id, provenance);

-- What an import from another registry has written, by the source's own
-- ids: a row is written in the transaction that writes its record, so an
-- import run again, resumed, or run twice at once writes nothing twice.
CREATE TABLE import_ledger (
    source       TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('agent', 'result')),
    source_id    TEXT NOT NULL,
    target_id    TEXT NOT NULL,
    imported_at  TEXT NOT NULL,
    PRIMARY KEY (source, kind, source_id)
);

-- +goose Down
DROP TABLE import_ledger;
DROP INDEX results_provenance;
ALTER TABLE results DROP COLUMN provenance;
