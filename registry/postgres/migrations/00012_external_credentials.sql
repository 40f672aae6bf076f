-- +goose Up
-- Credentials other registries issued, presented by an agent and verified
-- (signature, issuer's key, validity, status, and the issuer's attestation
-- that the agent presenting it is its subject); they meet credential
-- prerequisites. The newest per agent, issuer and achievement is kept.
CREATE TABLE external_credentials (
    agent_id    TEXT NOT NULL REFERENCES agents (id),
    issuer      TEXT NOT NULL,
    achievement TEXT NOT NULL,
    subject     TEXT NOT NULL,
    credential  JSONB NOT NULL,
    valid_until TIMESTAMPTZ,
    recorded_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (agent_id, issuer, achievement)
);

-- +goose Down
DROP TABLE external_credentials;
