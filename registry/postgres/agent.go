package postgres

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sipregistry/sip/registry"
)

var _ registry.AgentStore = (*Store)(nil)

const agentColumns = `id, name, description, owner, claimed_at, identity_md, results_public, created_at,
	key_id, key_hash, claim_token_hash, verification_code`

func scanAgent(row pgx.Row) (*registry.Agent, error) {
	var a registry.Agent
	var claimedAt *time.Time
	if err := row.Scan(&a.ID, &a.Name, &a.Description, &a.Owner, &claimedAt, &a.IdentityMD, &a.ResultsPublic, &a.CreatedAt,
		&a.KeyID, &a.KeyHash, &a.ClaimTokenHash, &a.VerificationCode); err != nil {
		return nil, err
	}
	a.CreatedAt = a.CreatedAt.UTC()
	if claimedAt != nil {
		a.ClaimedAt = claimedAt.UTC()
	}
	return &a, nil
}

// CreateAgent stores a new agent.
func (s *Store) CreateAgent(ctx context.Context, a *registry.Agent) (err error) {
	defer wrap(&err, "CreateAgent(%q)", a.Name)
	_, err = s.pool.Exec(ctx, `INSERT INTO agents (id, name, name_key, description, key_id, key_hash, claim_token_hash,
		verification_code, results_public, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		a.ID, a.Name, strings.ToLower(a.Name), a.Description, a.KeyID, a.KeyHash, a.ClaimTokenHash, a.VerificationCode,
		a.ResultsPublic, a.CreatedAt)
	return err
}

// AgentByKeyID returns the agent whose API key has that id.
func (s *Store) AgentByKeyID(ctx context.Context, keyID string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByKeyID")
	return scanAgent(s.pool.QueryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE key_id = $1", keyID))
}

// AgentByID returns the agent with that id.
func (s *Store) AgentByID(ctx context.Context, id string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByID")
	return scanAgent(s.pool.QueryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = $1", id))
}

// AgentByName returns the agent with that name, ignoring case.
func (s *Store) AgentByName(ctx context.Context, name string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByName(%q)", name)
	return scanAgent(s.pool.QueryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE name_key = $1", strings.ToLower(name)))
}

// AgentByClaimToken returns the agent a claim token belongs to.
func (s *Store) AgentByClaimToken(ctx context.Context, tokenHash string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByClaimToken")
	return scanAgent(s.pool.QueryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE claim_token_hash = $1", tokenHash))
}

// UpdateAgent applies u to the agent with id.
func (s *Store) UpdateAgent(ctx context.Context, id string, u registry.AgentUpdate) (_ *registry.Agent, err error) {
	defer wrap(&err, "UpdateAgent(%q)", id)
	return scanAgent(s.pool.QueryRow(ctx, `UPDATE agents SET
			description = COALESCE($2, description),
			results_public = COALESCE($3, results_public),
			identity_md = COALESCE($4, identity_md)
		WHERE id = $1 RETURNING `+agentColumns, id, u.Description, u.ResultsPublic, u.IdentityMD))
}

// ClaimAgent records the owner of the agent whose claim token hashes to
// tokenHash; only the first claim succeeds.
func (s *Store) ClaimAgent(ctx context.Context, tokenHash, owner string, at time.Time) (_ *registry.Agent, err error) {
	defer wrap(&err, "ClaimAgent")
	a, err := scanAgent(s.pool.QueryRow(ctx, `UPDATE agents SET owner = $1, claimed_at = $2
		WHERE claim_token_hash = $3 AND owner = '' RETURNING `+agentColumns, owner, at, tokenHash))
	if err == pgx.ErrNoRows {
		if _, err := s.AgentByClaimToken(ctx, tokenHash); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("agent already claimed: %w", registry.ErrConflict)
	}
	return a, err
}

// AgentNames maps agent ids to names.
func (s *Store) AgentNames(ctx context.Context, ids []string) (_ map[string]string, err error) {
	defer wrap(&err, "AgentNames")
	return s.names(ctx, "SELECT id, name FROM agents WHERE id = ANY($1)", ids)
}

// names maps ids to names with query, which takes the ids as $1.
func (s *Store) names(ctx context.Context, query string, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	rows, err := s.pool.Query(ctx, query, ids)
	if err != nil {
		return nil, err
	}
	var id, name string
	_, err = pgx.ForEachRow(rows, []any{&id, &name}, func() error { out[id] = name; return nil })
	return out, err
}

// RotateKey replaces an agent's API key if its key id is still oldKeyID.
func (s *Store) RotateKey(ctx context.Context, id, oldKeyID, keyID, keyHash string) (_ *registry.Agent, err error) {
	defer wrap(&err, "RotateKey(%q)", id)
	tag, err := s.pool.Exec(ctx, "UPDATE agents SET key_id = $3, key_hash = $4 WHERE id = $1 AND key_id = $2", id, oldKeyID, keyID, keyHash)
	if err != nil {
		return nil, err
	}
	if tag.RowsAffected() == 0 {
		if _, err := s.AgentByID(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("the key was rotated meanwhile: %w", registry.ErrConflict)
	}
	return s.AgentByID(ctx, id)
}

// PublicAgentNames maps to names the ids of agents whose results are public.
func (s *Store) PublicAgentNames(ctx context.Context, ids []string) (_ map[string]string, err error) {
	defer wrap(&err, "PublicAgentNames")
	return s.names(ctx, "SELECT id, name FROM agents WHERE results_public AND id = ANY($1)", ids)
}

// PublicAgents lists the agents whose results are public, by name.
func (s *Store) PublicAgents(ctx context.Context) (_ []registry.AgentCard, err error) {
	defer wrap(&err, "PublicAgents")
	rows, err := s.pool.Query(ctx, "SELECT id, name, description FROM agents WHERE results_public ORDER BY name_key")
	return collect(rows, err, func(row pgx.Row) (registry.AgentCard, error) {
		var a registry.AgentCard
		return a, row.Scan(&a.ID, &a.Name, &a.Description)
	})
}
