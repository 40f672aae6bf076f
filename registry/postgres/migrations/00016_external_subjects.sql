-- +goose Up
-- Each subject of another registry's credentials is held by at most one
-- agent here: the first to present one of its credentials. Recording a
-- credential claims its subject in the same transaction; another agent's
-- claim violates the primary key, and a credential row must name its
-- subject's agent (foreign key). Credentials recorded before this, of a
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
SELECT DISTINCT ON (issuer, subject) issuer, subject, agent_id
FROM external_credentials
ORDER BY issuer, subject, recorded_at, agent_id;

DELETE FROM external_credentials c WHERE NOT EXISTS (
    SELECT 1 FROM external_subjects s
    WHERE s.issuer = c.issuer AND s.subject = c.subject AND s.agent_id = c.agent_id
);

ALTER TABLE external_credentials ADD CONSTRAINT external_credentials_subject_fkey
    FOREIGN KEY (issuer, subject, agent_id) REFERENCES external_subjects (issuer, subject, agent_id);

-- +goose Down
ALTER TABLE external_credentials DROP CONSTRAINT external_credentials_subject_fkey;
DROP TABLE external_subjects;
