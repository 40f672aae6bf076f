-- +goose Up
-- An import's ledger also holds the sessions, messages and certification
-- transcripts it carried over (SQLite changes a CHECK by rebuilding).
CREATE TABLE import_ledger_new (
    source       TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('agent', 'result', 'session', 'message', 'transcript')),
    source_id    TEXT NOT NULL,
    target_id    TEXT NOT NULL,
    imported_at  TEXT NOT NULL,
    PRIMARY KEY (source, kind, source_id)
);
INSERT INTO import_ledger_new SELECT source, kind, source_id, target_id, imported_at FROM import_ledger;
DROP TABLE import_ledger;
ALTER TABLE import_ledger_new RENAME TO import_ledger;

-- +goose Down
DELETE FROM import_ledger WHERE kind NOT IN ('agent', 'result');
CREATE TABLE import_ledger_old (
    source       TEXT NOT NULL,
    kind         TEXT NOT NULL CHECK (kind IN ('agent', 'result')),
    source_id    TEXT NOT NULL,
    target_id    TEXT NOT NULL,
    imported_at  TEXT NOT NULL,
    PRIMARY KEY (source, kind, source_id)
);
INSERT INTO import_ledger_old SELECT source, kind, source_id, target_id, imported_at FROM import_ledger;
DROP TABLE import_ledger;
ALTER TABLE import_ledger_old RENAME TO import_ledger;
