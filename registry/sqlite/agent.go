package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/sipregistry/sip/registry"
)

var _ registry.AgentStore = (*Store)(nil)

const agentColumns = `id, name, description, owner, claimed_at, identity_md, results_public, created_at,
	key_id, key_hash, claim_token_hash, verification_code`

func scanAgent(row scanner) (*registry.Agent, error) {
	var a registry.Agent
	var claimedAt sql.NullString
	var createdAt string
	if err := row.Scan(&a.ID, &a.Name, &a.Description, &a.Owner, &claimedAt, &a.IdentityMD, &a.ResultsPublic, &createdAt,
		&a.KeyID, &a.KeyHash, &a.ClaimTokenHash, &a.VerificationCode); err != nil {
		return nil, err
	}
	var err error
	if a.CreatedAt, err = parseTime(createdAt); err != nil {
		return nil, err
	}
	if claimedAt.Valid {
		if a.ClaimedAt, err = parseTime(claimedAt.String); err != nil {
			return nil, err
		}
	}
	return &a, nil
}

// CreateAgent stores a new agent.
func (s *Store) CreateAgent(ctx context.Context, a *registry.Agent) (err error) {
	defer wrap(&err, "CreateAgent(%q)", a.Name)
	_, err = s.exec(ctx, `INSERT INTO agents (id, name, name_key, description, key_id, key_hash, claim_token_hash,
		verification_code, results_public, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.ID, a.Name, strings.ToLower(a.Name), a.Description, a.KeyID, a.KeyHash, a.ClaimTokenHash, a.VerificationCode,
		a.ResultsPublic, formatTime(a.CreatedAt))
	return err
}

// AgentByKeyID returns the agent whose API key has that id.
func (s *Store) AgentByKeyID(ctx context.Context, keyID string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByKeyID")
	return scanAgent(s.queryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE key_id = ?", keyID))
}

// AgentByID returns the agent with that id.
func (s *Store) AgentByID(ctx context.Context, id string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByID")
	return scanAgent(s.queryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = ?", id))
}

// AgentByName returns the agent with that name, ignoring case.
func (s *Store) AgentByName(ctx context.Context, name string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByName(%q)", name)
	return scanAgent(s.queryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE name_key = ?", strings.ToLower(name)))
}

// AgentByClaimToken returns the agent a claim token belongs to.
func (s *Store) AgentByClaimToken(ctx context.Context, tokenHash string) (_ *registry.Agent, err error) {
	defer wrap(&err, "AgentByClaimToken")
	return scanAgent(s.queryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE claim_token_hash = ?", tokenHash))
}

// UpdateAgent applies u to the agent with id.
func (s *Store) UpdateAgent(ctx context.Context, id string, u registry.AgentUpdate) (_ *registry.Agent, err error) {
	defer wrap(&err, "UpdateAgent(%q)", id)
	var sets []string
	var args []any
	if u.Description != nil {
		sets, args = append(sets, "description = ?"), append(args, *u.Description)
	}
	if u.ResultsPublic != nil {
		sets, args = append(sets, "results_public = ?"), append(args, *u.ResultsPublic)
	}
	if u.IdentityMD != nil {
		sets, args = append(sets, "identity_md = ?"), append(args, *u.IdentityMD)
	}
	if len(sets) > 0 {
		res, err := s.exec(ctx, "UPDATE agents SET "+strings.Join(sets, ", ")+" WHERE id = ?", append(args, id)...)
		if err != nil {
			return nil, err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil, sql.ErrNoRows
		}
	}
	return scanAgent(s.queryRow(ctx, "SELECT "+agentColumns+" FROM agents WHERE id = ?", id))
}

// ClaimAgent records the owner of the agent whose claim token hashes to
// tokenHash; only the first claim succeeds.
func (s *Store) ClaimAgent(ctx context.Context, tokenHash, owner string, at time.Time) (_ *registry.Agent, err error) {
	defer wrap(&err, "ClaimAgent")
	row, unlock := s.writeRow(ctx, `UPDATE agents SET owner = ?, claimed_at = ?
		WHERE claim_token_hash = ? AND owner = '' RETURNING `+agentColumns, owner, formatTime(at), tokenHash)
	a, err := scanAgent(row)
	unlock()
	if err == sql.ErrNoRows {
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
	return s.names(ctx, "SELECT id, name FROM agents WHERE id IN (%s)", ids)
}

// names maps ids to names with query, whose %s takes the ids' placeholders.
func (s *Store) names(ctx context.Context, query string, ids []string) (map[string]string, error) {
	out := map[string]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rows, err := s.db.QueryContext(ctx, fmt.Sprintf(query, placeholders(len(ids))), args...)
	pairs, err := collect(rows, err, func(row scanner) ([2]string, error) {
		var p [2]string
		return p, row.Scan(&p[0], &p[1])
	})
	for _, p := range pairs {
		out[p[0]] = p[1]
	}
	return out, err
}

// RotateKey replaces an agent's API key if its key id is still oldKeyID.
func (s *Store) RotateKey(ctx context.Context, id, oldKeyID, keyID, keyHash string) (_ *registry.Agent, err error) {
	defer wrap(&err, "RotateKey(%q)", id)
	res, err := s.exec(ctx, "UPDATE agents SET key_id = ?, key_hash = ? WHERE id = ? AND key_id = ?", keyID, keyHash, id, oldKeyID)
	if err != nil {
		return nil, err
	}
	if n, _ := res.RowsAffected(); n == 0 {
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
	return s.names(ctx, "SELECT id, name FROM agents WHERE results_public = 1 AND id IN (%s)", ids)
}

// PublicAgents lists the agents whose results are public, by name.
func (s *Store) PublicAgents(ctx context.Context) (_ []registry.AgentCard, err error) {
	defer wrap(&err, "PublicAgents")
	rows, err := s.query(ctx, "SELECT id, name, description FROM agents WHERE results_public = 1 ORDER BY name_key")
	return collect(rows, err, func(row scanner) (registry.AgentCard, error) {
		var a registry.AgentCard
		return a, row.Scan(&a.ID, &a.Name, &a.Description)
	})
}
