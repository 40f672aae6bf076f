-- +goose Up
-- Multi-agent sessions (seed 001): one base model of sessions, their
-- participants and an ordered channel of messages, for proctored
-- evaluations and live class work alike.
CREATE TABLE sessions (
    id                TEXT    PRIMARY KEY,
    evaluation_id     TEXT    NOT NULL REFERENCES sips (id),
    kind              TEXT    NOT NULL CHECK (kind IN ('proctored', 'live_class_work')),
    status            TEXT    NOT NULL CHECK (status IN ('forming', 'active', 'ended')),
    registration_id   TEXT    UNIQUE REFERENCES registrations (id),
    proctor_id        TEXT    REFERENCES agents (id),
    min_participants  INTEGER NOT NULL CHECK (min_participants >= 1),
    max_participants  INTEGER NOT NULL CHECK (max_participants >= min_participants),
    participants      INTEGER NOT NULL DEFAULT 0 CHECK (participants >= 0 AND participants <= max_participants),
    last_sequence     INTEGER NOT NULL DEFAULT 0 CHECK (last_sequence >= 0),
    created_at        TEXT NOT NULL,
    started_at        TEXT,
    ends_at           TEXT,
    ended_at          TEXT,
    CHECK (kind <> 'proctored' OR registration_id IS NOT NULL),
    CHECK (status = 'forming' OR started_at IS NOT NULL),
    CHECK (status <> 'ended' OR ended_at IS NOT NULL)
);
CREATE INDEX sessions_seats ON sessions (evaluation_id, kind, status, created_at);

CREATE TABLE session_participants (
    session_id       TEXT NOT NULL REFERENCES sessions (id),
    agent_id         TEXT NOT NULL REFERENCES agents (id),
    role             TEXT NOT NULL CHECK (role IN ('proctor', 'candidate', 'participant')),
    registration_id  TEXT REFERENCES registrations (id),
    joined_at        TEXT NOT NULL,
    PRIMARY KEY (session_id, agent_id),
    CHECK ((role = 'proctor') = (registration_id IS NULL))
);
CREATE INDEX session_participants_agent ON session_participants (agent_id);
-- A registration takes part in one session.
CREATE UNIQUE INDEX session_participants_registration ON session_participants (registration_id) WHERE registration_id IS NOT NULL;

CREATE TABLE session_messages (
    id          TEXT    PRIMARY KEY,
    session_id  TEXT    NOT NULL REFERENCES sessions (id),
    sequence    INTEGER NOT NULL CHECK (sequence > 0),
    sender_id   TEXT    NOT NULL REFERENCES agents (id),
    role        TEXT    NOT NULL,
    content     TEXT    NOT NULL CHECK (length(content) BETWEEN 1 AND 16384),
    created_at  TEXT NOT NULL,
    UNIQUE (session_id, sequence)
);

-- A message takes the session's next sequence (computed in its INSERT,
-- under SQLite's single write lock); this keeps the session's counter.
-- +goose StatementBegin
CREATE TRIGGER session_messages_sequence AFTER INSERT ON session_messages
BEGIN UPDATE sessions SET last_sequence = NEW.sequence WHERE id = NEW.session_id; END;
-- +goose StatementEnd

-- The transcript is a record: messages are never changed or deleted.
-- +goose StatementBegin
CREATE TRIGGER session_messages_no_update BEFORE UPDATE ON session_messages
BEGIN SELECT RAISE(ABORT, 'session messages are append-only'); END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER session_messages_no_delete BEFORE DELETE ON session_messages
BEGIN SELECT RAISE(ABORT, 'session messages are append-only'); END;
-- +goose StatementEnd
