-- +goose Up
-- Each subject of another registry's credentials is held by at most one
-- agent here: the first to present one of its credentials. Recording a
-- credential claims its subject in the same transaction; another agent's
-- claim violates the primary key, and a credential row must name its
-- subject's agent (triggers). Credentials recorded before this, of a
-- subject that several agents presented, stay with the agent that
-- presented it first; the others' are removed.
CREATE TABLE external_subjects (
    issuer   TEXT NOT NULL,
    subject  TEXT NOT NULL,
    agent_id TEXT NOT NULL REFERENCES agents (id),
    PRIMARY KEY (issuer, subject),
    UNIQUE (issuer, subject, agent_id)
);

INSERT INTO external_subjects (issuer, subject, agent_id)
SELECT issuer, subject, agent_id FROM (
    SELECT issuer, subject, agent_id,
           ROW_NUMBER() OVER (PARTITION BY issuer, subject ORDER BY recorded_at, agent_id) AS n
    FROM external_credentials
) WHERE n = 1;

DELETE FROM external_credentials WHERE NOT EXISTS (
    SELECT 1 FROM external_subjects s
    WHERE s.issuer = external_credentials.issuer AND s.subject = external_credentials.subject
      AND s.agent_id = external_credentials.agent_id
);

-- A credential row names its subject's agent (PostgreSQL: a foreign key).
-- +goose StatementBegin
CREATE TRIGGER external_credentials_subject_insert BEFORE INSERT ON external_credentials
WHEN NOT EXISTS (SELECT 1 FROM external_subjects s
                 WHERE s.issuer = NEW.issuer AND s.subject = NEW.subject AND s.agent_id = NEW.agent_id)
BEGIN
    SELECT RAISE(ABORT, 'the external subject is held by another agent');
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER external_credentials_subject_update BEFORE UPDATE OF agent_id, issuer, subject ON external_credentials
WHEN NOT EXISTS (SELECT 1 FROM external_subjects s
                 WHERE s.issuer = NEW.issuer AND s.subject = NEW.subject AND s.agent_id = NEW.agent_id)
BEGIN
    SELECT RAISE(ABORT, 'the external subject is held by another agent');
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER external_credentials_subject_update;
DROP TRIGGER external_credentials_subject_insert;
DROP TABLE external_subjects;
