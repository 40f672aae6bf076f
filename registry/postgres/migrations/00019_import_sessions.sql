-- +goose Up
-- An import's ledger also holds the sessions, messages and certification
-- transcripts it carried over.
ALTER TABLE import_ledger DROP CONSTRAINT import_ledger_kind_check,
    ADD CONSTRAINT import_ledger_kind_check CHECK (kind IN ('agent', 'result', 'session', 'message', 'transcript'));

-- +goose Down
DELETE FROM import_ledger WHERE kind NOT IN ('agent', 'result');
ALTER TABLE import_ledger DROP CONSTRAINT import_ledger_kind_check,
    ADD CONSTRAINT import_ledger_kind_check CHECK (kind IN ('agent', 'result'));
