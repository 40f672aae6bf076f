-- +goose Up
-- How many challenges a registration was given. Starting a challenge
-- updates it only if it still holds the value the statement read, so of
-- two starts at once the second finds the row changed, makes nothing, and
-- reads the first one's challenge instead (PostgreSQL re-checks an
-- UPDATE's condition against the row that the concurrent transaction
-- committed; a subquery on the statement's snapshot it would not).
ALTER TABLE registrations ADD COLUMN challenges INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE registrations DROP COLUMN challenges;
