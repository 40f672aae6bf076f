-- +goose Up
-- The registry: SIP definitions, their versions, their prerequisites, and
-- the sync that put them there. Nothing is ever deleted: a SIP whose file
-- disappears is marked removed (and deprecated), and version rows are
-- append-only, so results can always name the version they were made under.

CREATE TABLE sync_state (
    id          INTEGER     PRIMARY KEY CHECK (id = 1),
    generation  BIGINT      NOT NULL CHECK (generation > 0),
    commit_sha  TEXT        NOT NULL DEFAULT '',
    source      TEXT        NOT NULL,
    synced_at   TIMESTAMPTZ NOT NULL
);

CREATE TABLE syncs (
    generation  BIGINT      PRIMARY KEY,
    commit_sha  TEXT        NOT NULL DEFAULT '',
    source      TEXT        NOT NULL,
    synced_at   TIMESTAMPTZ NOT NULL,
    added       INTEGER     NOT NULL CHECK (added >= 0),
    changed     INTEGER     NOT NULL CHECK (changed >= 0),
    deprecated  INTEGER     NOT NULL CHECK (deprecated >= 0)
);

CREATE TABLE sips (
    id                  TEXT             PRIMARY KEY CHECK (id ~ '^[a-z0-9]+(-[a-z0-9]+)*$' AND length(id) <= 64),
    sip                 INTEGER          NOT NULL UNIQUE CHECK (sip > 0),
    name                TEXT             NOT NULL CHECK (name <> ''),
    module              TEXT             NOT NULL,
    type                TEXT             NOT NULL CHECK (type IN ('process', 'simple_pass_fail', 'complex_benchmark', 'proctored', 'live_class_work', 'agent_certification')),
    status              TEXT             NOT NULL CHECK (status IN ('draft', 'active', 'deprecated')),
    version             TEXT             NOT NULL,
    points              DOUBLE PRECISION NOT NULL DEFAULT 0 CHECK (points >= 0),
    author              TEXT             NOT NULL,
    handler             TEXT             NOT NULL DEFAULT '',
    description         TEXT             NOT NULL DEFAULT '',
    created_at          TIMESTAMPTZ      NOT NULL,
    updated_at          TIMESTAMPTZ      NOT NULL,
    path                TEXT             NOT NULL,
    body                TEXT             NOT NULL,
    definition          JSONB            NOT NULL,
    raw_config          JSONB,
    content_sha256      TEXT             NOT NULL CHECK (length(content_sha256) = 64),
    removed             BOOLEAN          NOT NULL DEFAULT false,
    current_version_id  BIGINT,
    CHECK (NOT removed OR status = 'deprecated'),
    CHECK (type = 'process' OR handler <> '')
);

CREATE TABLE sip_versions (
    id              BIGINT      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    sip_id          TEXT        NOT NULL REFERENCES sips (id),
    version         TEXT        NOT NULL,
    content_sha256  TEXT        NOT NULL CHECK (length(content_sha256) = 64),
    commit_sha      TEXT        NOT NULL DEFAULT '',
    synced_at       TIMESTAMPTZ NOT NULL,
    content         BYTEA       NOT NULL,
    UNIQUE (sip_id, id)
);

ALTER TABLE sips ADD FOREIGN KEY (id, current_version_id) REFERENCES sip_versions (sip_id, id);

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
CREATE FUNCTION registry_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'integrity_constraint_violation';
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER sip_versions_immutable BEFORE UPDATE OR DELETE ON sip_versions
    FOR EACH ROW EXECUTE FUNCTION registry_refuse('sip_versions rows are immutable and never deleted');

CREATE TRIGGER sips_kept BEFORE DELETE ON sips
    FOR EACH ROW EXECUTE FUNCTION registry_refuse('sips are deprecated, never deleted');

CREATE TRIGGER sips_identity BEFORE UPDATE OF id, sip ON sips
    FOR EACH ROW WHEN (NEW.id <> OLD.id OR NEW.sip <> OLD.sip)
    EXECUTE FUNCTION registry_refuse('a SIP''s id and number never change');
