-- +goose Up
-- A started attempt has a deadline: when its challenge, time limit or
-- nonce runs out. The sweeper ends an attempt whose deadline passed with
-- an expired result, so no attempt stays open for ever. Attempts started
-- before take theirs from their challenge or their job where they have one.
ALTER TABLE registrations ADD COLUMN deadline_at TEXT;
UPDATE registrations SET deadline_at = (SELECT max(expires_at) FROM challenges c WHERE c.registration_id = registrations.id)
    WHERE status = 'in_progress';
UPDATE registrations SET deadline_at = (SELECT nonce_expires_at FROM jobs j WHERE j.registration_id = registrations.id AND j.status = 'pending')
    WHERE status = 'in_progress' AND deadline_at IS NULL;
CREATE INDEX registrations_deadlines ON registrations (deadline_at) WHERE status = 'in_progress' AND deadline_at IS NOT NULL;

-- A live session seats registrations of one version of its SIP: its
-- participants, duration and grade all come from that version.
ALTER TABLE sessions ADD COLUMN version_id INTEGER;
UPDATE sessions SET version_id = (SELECT r.version_id FROM registrations r
    JOIN session_participants p ON p.registration_id = r.id WHERE p.session_id = sessions.id LIMIT 1);
CREATE INDEX sessions_overdue ON sessions (ends_at) WHERE status = 'active' AND ends_at IS NOT NULL;
