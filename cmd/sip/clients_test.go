package main

import (
	"context"
	"net/http"
	"reflect"
	"testing"

	"github.com/sipregistry/sip/examples/sipclient"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/postgres/postgrestest"
)

// forEachStore runs fn against a whole server on each store: the embedded
// SQLite default that `make run` uses, and PostgreSQL.
func forEachStore(t *testing.T, fn func(t *testing.T, m *Main)) {
	stores := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"sqlite", func(*testing.T) string { return "" }},
		{"postgres", func(t *testing.T) string { return postgrestest.URL(t) }},
	}
	for _, s := range stores {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			fn(t, MustRunMain(t, &Main{DatabaseURL: s.url(t)}))
		})
	}
}

// bearer authenticates the generated client's requests with an API key.
func bearer(key string) sipclient.ClientOption {
	return sipclient.WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+key)
		return nil
	})
}

// TestGeneratedGoClientTakesPoAW: the Go client oapi-codegen generates
// from the served document takes Proof of Agentic Work end to end, from
// registering the agent to a passed result, with nothing hand-written
// between it and the server.
func TestGeneratedGoClientTakesPoAW(t *testing.T) {
	t.Parallel()
	forEachStore(t, func(t *testing.T, m *Main) {
		ctx := t.Context()
		anon, err := sipclient.NewClientWithResponses(m.URL)
		if err != nil {
			t.Fatal(err)
		}
		desc := "Takes Proof of Agentic Work through the generated client."
		reg, err := anon.RegisterAgentWithResponse(ctx, sipclient.RegisterAgentJSONRequestBody{Name: "generated-go", Description: &desc})
		if err != nil || reg.JSON201 == nil {
			t.Fatalf("register agent: %v", failure(reg, err))
		}
		c, err := sipclient.NewClientWithResponses(m.URL, bearer(reg.JSON201.Agent.ApiKey))
		if err != nil {
			t.Fatal(err)
		}
		register := true // registers first, as docs/agents.md shows
		st, err := c.StartWithResponse(ctx, "poaw", sipclient.StartJSONRequestBody{Register: &register})
		if err != nil || st.JSON201 == nil {
			t.Fatalf("start: %v", failure(st, err))
		}
		if kind, err := st.JSON201.Discriminator(); err != nil || kind != "challenge" {
			t.Fatalf("start kind %q (%v); want challenge", kind, err)
		}
		started, err := st.JSON201.AsStartChallenge()
		if err != nil {
			t.Fatal(err)
		}
		ch, err := c.GetChallengeWithResponse(ctx, "poaw", started.Challenge.Id)
		if err != nil || ch.JSON200 == nil {
			t.Fatalf("challenge: %v", failure(ch, err))
		}
		var sub sipclient.SubmitJSONRequestBody
		if err := sub.FromChallengeSubmission(sipclient.ChallengeSubmission{
			ChallengeId: started.Challenge.Id,
			Hash:        evaluation.PoAWHash(ch.JSON200.Challenge.Values, ch.JSON200.Challenge.Nonce),
		}); err != nil {
			t.Fatal(err)
		}
		res, err := c.SubmitWithResponse(ctx, "poaw", sub)
		if err != nil || res.JSON201 == nil {
			t.Fatalf("submit: %v", failure(res, err))
		}
		if got := res.JSON201.Result; !got.Passed || got.Outcome == nil || *got.Outcome != sipclient.OutcomePassed || got.EvaluationId != "poaw" {
			t.Errorf("result %+v; want a passed poaw", got)
		}
	})
}

// failure says why a generated call did not answer as wanted: the error,
// or the status and body it answered with (every generated response has
// HTTPResponse and Body).
func failure(r any, err error) string {
	if err != nil {
		return err.Error()
	}
	v := reflect.ValueOf(r).Elem()
	return v.FieldByName("HTTPResponse").Interface().(*http.Response).Status + " " + string(v.FieldByName("Body").Bytes())
}
