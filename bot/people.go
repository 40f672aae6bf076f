package bot

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/google/go-github/v62/github"

	"github.com/sipregistry/sip/bot/policy"
	"github.com/sipregistry/sip/registry"
)

// maxLookups bounds the GitHub users and teams one check looks up: a file
// that names thousands of handles costs at most this many requests, and
// the rest are not judged.
const maxLookups = 50

// userExists says whether a GitHub user exists.
func userExists(ctx context.Context, gh *github.Client, login string) (bool, error) {
	_, resp, err := gh.Users.Get(ctx, login)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("user %s: %w", login, err)
	}
	return true, nil
}

// teamExists says whether a team (org/slug) exists and the App can see it.
func teamExists(ctx context.Context, gh *github.Client, team string) (bool, error) {
	org, slug, _ := strings.Cut(team, "/")
	_, resp, err := gh.Teams.GetTeamBySlug(ctx, org, slug)
	if resp != nil && resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("team %s: %w", team, err)
	}
	return true, nil
}

// authorUsers looks up the @handles in the author fields of the SIPs a
// pull request touches, for the author-unknown rule (lower case →
// exists).
func authorUsers(ctx context.Context, gh *github.Client, touched []string, docs []*registry.Document) (map[string]bool, error) {
	users := map[string]bool{}
	for _, d := range docs {
		if d.SIP == nil || !slices.Contains(touched, d.Path) {
			continue
		}
		for _, h := range registry.Handles(d.SIP.Author) {
			key := strings.ToLower(h)
			if _, done := users[key]; done || len(users) == maxLookups {
				continue
			}
			ok, err := userExists(ctx, gh, h)
			if err != nil {
				return nil, err
			}
			users[key] = ok
		}
	}
	return users, nil
}

// verifyPeople checks that every team a policy names exists on GitHub,
// and with users every user too, each problem at its line. A team that
// does not exist would let nobody approve; a login nobody holds could be
// registered by anyone and then approve. Users are checked when a pull
// request proposes the policy, teams (which can be deleted) at every
// decision.
func verifyPeople(ctx context.Context, gh *github.Client, p *policy.Policy, withUsers bool) (*policy.Error, error) {
	users, teams := p.People()
	if !withUsers {
		users = nil
	}
	bad := &policy.Error{}
	n := 0
	for _, u := range users {
		if n++; n > maxLookups {
			break
		}
		ok, err := userExists(ctx, gh, u)
		if err != nil {
			return nil, err
		}
		if !ok {
			bad.Problems = append(bad.Problems, policy.LineError{Line: p.Line(u), Message: fmt.Sprintf("user @%s is not a GitHub user", u)})
		}
	}
	for _, t := range teams {
		if n++; n > maxLookups {
			break
		}
		ok, err := teamExists(ctx, gh, t)
		if err != nil {
			return nil, err
		}
		if !ok {
			bad.Problems = append(bad.Problems, policy.LineError{Line: p.Line(t),
				Message: fmt.Sprintf("team @%s does not exist (or the App cannot see it: it needs the organization's Members permission)", t)})
		}
	}
	if len(bad.Problems) == 0 {
		return nil, nil
	}
	return bad, nil
}
