-- +goose Up
-- A result revoked by the registry's maintainers or by its own agent: it
-- stays in the record, but no longer counts as a pass, and its credential's
-- bit in the revocation status list is set.
ALTER TABLE results ADD COLUMN revoked_at TEXT;
ALTER TABLE results ADD COLUMN revoked_reason TEXT NOT NULL DEFAULT '';
-- The index of a result's credential in the revocation status list, given
-- the first time its credential is issued and never changed.
CREATE TABLE credential_status (
    result_id  TEXT PRIMARY KEY REFERENCES results (id),
    list_index INTEGER NOT NULL UNIQUE CHECK (list_index >= 0)
);

-- +goose Down
DROP TABLE credential_status;
ALTER TABLE results DROP COLUMN revoked_reason;
ALTER TABLE results DROP COLUMN revoked_at;
