-- +goose Up
-- The registry: SIP definitions, their versions, their prerequisites, and
-- the sync that put them there. Nothing is ever deleted: a SIP whose file
-- disappears is marked removed (and deprecated), and version rows are
-- append-only, so results can always name the version they were made under.

CREATE TABLE sync_state (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    generation  INTEGER NOT NULL CHECK (generation > 0),
    commit_sha  TEXT    NOT NULL DEFAULT '',
    source      TEXT    NOT NULL,
    synced_at   TEXT    NOT NULL
);

CREATE TABLE syncs (
    generation  INTEGER PRIMARY KEY,
    commit_sha  TEXT    NOT NULL DEFAULT '',
    source      TEXT    NOT NULL,
    synced_at   TEXT    NOT NULL,
    added       INTEGER NOT NULL CHECK (added >= 0),
    changed     INTEGER NOT NULL CHECK (changed >= 0),
    deprecated  INTEGER NOT NULL CHECK (deprecated >= 0)
);

CREATE TABLE sips (
    id                  TEXT    PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 64 AND id NOT GLOB '*[^a-z0-9-]*'),
    sip                 INTEGER NOT NULL UNIQUE CHECK (sip > 0),
    name                TEXT    NOT NULL CHECK (name <> ''),
    module              TEXT    NOT NULL,
    type                TEXT    NOT NULL CHECK (type IN ('process', 'simple_pass_fail', 'complex_benchmark', 'proctored', 'live_class_work', 'agent_certification')),
    status              TEXT    NOT NULL CHECK (status IN ('draft', 'active', 'deprecated')),
    version             TEXT    NOT NULL,
    points              REAL    NOT NULL DEFAULT 0 CHECK (points >= 0),
    author              TEXT    NOT NULL,
    handler             TEXT    NOT NULL DEFAULT '',
    description         TEXT    NOT NULL DEFAULT '',
    created_at          TEXT    NOT NULL,
    updated_at          TEXT    NOT NULL,
    path                TEXT    NOT NULL,
    body                TEXT    NOT NULL,
    definition          TEXT    NOT NULL CHECK (json_valid(definition)),
    raw_config          TEXT    CHECK (raw_config IS NULL OR json_valid(raw_config)),
    content_sha256      TEXT    NOT NULL CHECK (length(content_sha256) = 64),
    removed             INTEGER NOT NULL DEFAULT 0 CHECK (removed IN (0, 1)),
    current_version_id  INTEGER,
    CHECK (removed = 0 OR status = 'deprecated'),
    CHECK (type = 'process' OR handler <> ''),
    FOREIGN KEY (id, current_version_id) REFERENCES sip_versions (sip_id, id)
);

CREATE TABLE sip_versions (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    sip_id          TEXT    NOT NULL REFERENCES sips (id),
    version         TEXT    NOT NULL,
    content_sha256  TEXT    NOT NULL CHECK (length(content_sha256) = 64),
    commit_sha      TEXT    NOT NULL DEFAULT '',
    synced_at       TEXT    NOT NULL,
    content         BLOB    NOT NULL,
    UNIQUE (sip_id, id)
);

CREATE TABLE sip_prerequisites (
    sip_id           TEXT    NOT NULL REFERENCES sips (id),
    prerequisite_id  TEXT    NOT NULL REFERENCES sips (id),
    position         INTEGER NOT NULL CHECK (position >= 0),
    PRIMARY KEY (sip_id, prerequisite_id),
    CHECK (sip_id <> prerequisite_id)
);

CREATE INDEX sip_prerequisites_prerequisite ON sip_prerequisites (prerequisite_id);
CREATE INDEX sips_listing ON sips (removed, status, type, module, sip);

-- +goose StatementBegin
CREATE TRIGGER sip_versions_immutable BEFORE UPDATE ON sip_versions
BEGIN
    SELECT RAISE(ABORT, 'sip_versions rows are immutable');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER sip_versions_kept BEFORE DELETE ON sip_versions
BEGIN
    SELECT RAISE(ABORT, 'sip_versions rows are never deleted');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER sips_kept BEFORE DELETE ON sips
BEGIN
    SELECT RAISE(ABORT, 'sips are deprecated, never deleted');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER sips_identity BEFORE UPDATE OF id, sip ON sips
WHEN NEW.id <> OLD.id OR NEW.sip <> OLD.sip
BEGIN
    SELECT RAISE(ABORT, 'a SIP''s id and number never change');
END;
-- +goose StatementEnd
