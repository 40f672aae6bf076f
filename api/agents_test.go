package api_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

// fakeOEmbed stands in for X's oEmbed endpoint: it serves the posts it
// holds, keyed by URL, and answers status for anything else.
type fakeOEmbed struct {
	mu     sync.Mutex
	posts  map[string]string // tweet URL → author handle and text, "handle|text"
	status int
	calls  atomic.Int32
}

func (f *fakeOEmbed) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.status != 0 {
		w.WriteHeader(f.status)
		return
	}
	post, ok := f.posts[r.URL.Query().Get("url")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	handle, text, _ := strings.Cut(post, "|")
	json.NewEncoder(w).Encode(map[string]any{
		"author_name": handle, "author_url": "https://twitter.com/" + handle, "type": "rich", "version": "1.0",
		"html": `<blockquote class="twitter-tweet"><p lang="en" dir="ltr">` + text + `</p>&mdash; ` + handle + `</blockquote>`,
	})
}

type agentClient struct {
	*apitest.Client
	oembed *fakeOEmbed
	logs   *strings.Builder
}

func newAgentClient(t *testing.T, s registry.Store) *agentClient {
	t.Helper()
	fake := &fakeOEmbed{posts: map[string]string{}}
	oe := httptest.NewServer(fake)
	t.Cleanup(oe.Close)
	logs := &strings.Builder{}
	var mu sync.Mutex
	srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), BaseURL: "https://sip.example", Logger: slog.New(slog.NewTextHandler(lockedWriter{&mu, logs}, nil))}, runtimeStores{Agents: s.(registry.AgentStore)}, withOEmbed(oe.URL+"/oembed"))))
	t.Cleanup(srv.Close)
	return &agentClient{Client: apitest.New(t, srv.URL), oembed: fake, logs: logs}
}

type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

type registered struct {
	Agent struct {
		ID               string `json:"id"`
		Name             string `json:"name"`
		APIKey           string `json:"api_key"`
		ClaimURL         string `json:"claim_url"`
		VerificationCode string `json:"verification_code"`
	} `json:"agent"`
}

var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func (c *agentClient) register(name string) registered {
	c.T.Helper()
	var r registered
	if resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"`+name+`","description":"Test agent"}`), jsonHeader, &r); resp.StatusCode != 201 {
		c.T.Fatalf("register %s: %d", name, resp.StatusCode)
	}
	return r
}

func bearer(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}, "Content-Type": {"application/json"}}
}

type meResponse struct {
	Agent struct {
		Name              string  `json:"name"`
		Description       string  `json:"description"`
		IsClaimed         bool    `json:"is_claimed"`
		Owner             *string `json:"owner"`
		IdentitySubmitted bool    `json:"identity_submitted"`
		ResultsPublic     bool    `json:"results_public"`
	} `json:"agent"`
}

func TestAgentRegisterAndMe(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		c := newAgentClient(t, s)
		r := c.register("Ada-1")
		if !strings.HasPrefix(r.Agent.APIKey, "sip_") || !strings.HasPrefix(r.Agent.ClaimURL, "https://sip.example/claim/claim_") ||
			!strings.HasPrefix(r.Agent.VerificationCode, "sip-") || !strings.HasPrefix(r.Agent.ID, "agt_") {
			t.Errorf("credentials %+v", r.Agent)
		}
		stored, err := s.(registry.AgentStore).AgentByName(t.Context(), "ada-1")
		if err != nil || stored.KeyHash == r.Agent.APIKey || strings.Contains(stored.KeyHash, r.Agent.APIKey) {
			t.Errorf("the key is not stored as a hash: %v", err)
		}
		var me meResponse
		if resp := c.Do("GET", "/api/v1/agents/me", nil, bearer(r.Agent.APIKey), &me); resp.StatusCode != 200 || me.Agent.Name != "Ada-1" ||
			me.Agent.IsClaimed || me.Agent.Owner != nil || me.Agent.IdentitySubmitted || !me.Agent.ResultsPublic {
			t.Errorf("me: %d %+v", resp.StatusCode, me)
		}
		other := c.register("Bob_2")
		for name, h := range map[string]http.Header{
			"no header":      nil,
			"not bearer":     {"Authorization": {"Basic " + r.Agent.APIKey}},
			"garbage":        {"Authorization": {"Bearer hello"}},
			"wrong secret":   {"Authorization": {"Bearer " + r.Agent.APIKey[:len(r.Agent.APIKey)-2] + "xx"}},
			"mixed keys":     {"Authorization": {"Bearer " + r.Agent.APIKey[:17] + other.Agent.APIKey[17:]}},
			"unknown key id": {"Authorization": {"Bearer sip_000000000000_" + strings.Repeat("a", 43)}},
			"empty bearer":   {"Authorization": {"Bearer "}},
			"key and more":   {"Authorization": {"Bearer " + r.Agent.APIKey + "x"}},
		} {
			var e errorResponse
			resp := c.Do("GET", "/api/v1/agents/me", nil, h, &e)
			if resp.StatusCode != 401 || e.ErrorDetail.Code != "unauthorized" || resp.Header.Get("WWW-Authenticate") == "" {
				t.Errorf("%s: %d %+v", name, resp.StatusCode, e)
			}
		}
		if strings.Contains(c.logs.String(), r.Agent.APIKey) || strings.Contains(c.logs.String(), r.Agent.ClaimURL) {
			t.Error("a secret reached the logs")
		}
	})
}

func TestAgentRegisterBadInput(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		c := newAgentClient(t, s)
		c.register("Taken")
		for _, tt := range []struct {
			name, body string
			header     http.Header
			status     int
			code       string
		}{
			{"name taken, other case", `{"name":"TAKEN"}`, jsonHeader, 409, "conflict"},
			{"name too short", `{"name":"ab"}`, jsonHeader, 400, "validation_failed"},
			{"name with space", `{"name":"a b c"}`, jsonHeader, 400, "validation_failed"},
			{"reserved name", `{"name":"register"}`, jsonHeader, 400, "validation_failed"},
			{"no name", `{}`, jsonHeader, 400, "validation_failed"},
			{"long description", `{"name":"Long_desc","description":"` + strings.Repeat("d", 501) + `"}`, jsonHeader, 400, "validation_failed"},
			{"unknown field", `{"name":"Unknown","api_key":"mine"}`, jsonHeader, 400, "validation_failed"},
			{"wrong type", `{"name":42}`, jsonHeader, 400, "validation_failed"},
			{"malformed JSON", `{"name":`, jsonHeader, 400, "bad_request"},
			{"two objects", `{"name":"Two_obj"}{"name":"x"}`, jsonHeader, 400, "bad_request"},
			{"empty body", ``, jsonHeader, 400, "bad_request"},
			{"not JSON", `name=x`, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, 415, "unsupported_media_type"},
			{"no content type", `{"name":"NoCT"}`, nil, 415, "unsupported_media_type"},
			{"oversized", `{"name":"Big","description":"` + strings.Repeat("x", 2<<20) + `"}`, jsonHeader, 413, "payload_too_large"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var e errorResponse
				resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(tt.body), tt.header, &e)
				if resp.StatusCode != tt.status || e.ErrorDetail.Code != tt.code {
					t.Errorf("got %d %+v, want %d %s", resp.StatusCode, e, tt.status, tt.code)
				}
			})
		}
	})
}

func TestAgentConcurrentRegistration(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		c := newAgentClient(t, s)
		var created, conflicts atomic.Int32
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				switch resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"Same_Name"}`), jsonHeader, nil); resp.StatusCode {
				case 201:
					created.Add(1)
				case 409:
					conflicts.Add(1)
				default:
					t.Errorf("status %d", resp.StatusCode)
				}
			})
		}
		wg.Wait()
		if created.Load() != 1 || conflicts.Load() != 19 {
			t.Errorf("%d created, %d conflicts", created.Load(), conflicts.Load())
		}
	})
}

func TestAgentPatchAndIdentity(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		c := newAgentClient(t, s)
		key := c.register("Patcher").Agent.APIKey
		var me meResponse
		if resp := c.Do("PATCH", "/api/v1/agents/me", strings.NewReader(`{"description":"Better.","results_public":false}`), bearer(key), &me); resp.StatusCode != 200 ||
			me.Agent.Description != "Better." || me.Agent.ResultsPublic {
			t.Errorf("patch: %d %+v", resp.StatusCode, me)
		}
		if resp := c.Do("PUT", "/api/v1/agents/me/identity", strings.NewReader(`{"identity_md":"# Patcher\n\nI review code."}`), bearer(key), &me); resp.StatusCode != 200 ||
			!me.Agent.IdentitySubmitted || me.Agent.Description != "Better." {
			t.Errorf("identity: %d %+v", resp.StatusCode, me)
		}
		if resp := c.Do("PUT", "/api/v1/agents/me/identity", strings.NewReader(`{"identity_md":"   "}`), bearer(key), &me); resp.StatusCode != 200 || me.Agent.IdentitySubmitted {
			t.Errorf("blank identity counts as submitted: %+v", me)
		}
		for _, tt := range []struct {
			method, path, body string
			status             int
		}{
			{"PATCH", "/api/v1/agents/me", `{"results_public":"no"}`, 400},
			{"PATCH", "/api/v1/agents/me", `{"name":"Renamed"}`, 400},
			{"PUT", "/api/v1/agents/me/identity", `{}`, 400},
			{"PUT", "/api/v1/agents/me/identity", `{"identity_md":"` + strings.Repeat("i", 10<<10+1) + `"}`, 413},
			{"PUT", "/api/v1/agents/me/identity", `{"identity_md":"x"}`, 401},
		} {
			t.Run(tt.method+" "+tt.path, func(t *testing.T) {
				h := bearer(key)
				if tt.status == 401 {
					h = jsonHeader
				}
				if resp := c.Do(tt.method, tt.path, strings.NewReader(tt.body), h, nil); resp.StatusCode != tt.status {
					t.Errorf("with %.40s: got %d, want %d", tt.body, resp.StatusCode, tt.status)
				}
			})
		}
	})
}

func claimBody(token, tweet string) *strings.Reader {
	return strings.NewReader(fmt.Sprintf(`{"claim_token":%q,"tweet_url":%q}`, token, tweet))
}

func TestAgentClaim(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		c := newAgentClient(t, s)
		r := c.register("Claimee")
		token := r.Agent.ClaimURL[strings.LastIndex(r.Agent.ClaimURL, "/")+1:]
		good := "https://x.com/alice/status/1001"
		noCode := "https://x.com/alice/status/1002"
		c.oembed.posts[good] = "alice|I own this agent: " + strings.ToLower(r.Agent.VerificationCode) + " #sip"
		c.oembed.posts[noCode] = "alice|Just a tweet"
		// X names the author; a name that is no handle (a development
		// owner's shape among them) is never recorded as an owner.
		devAuthor := "https://x.com/alice/status/1003"
		c.oembed.posts[devAuthor] = "dev:alice|I own this agent: " + r.Agent.VerificationCode

		for _, tt := range []struct {
			name, token, tweet string
			status             int
			code               string
		}{
			{"tweet without the code", token, noCode, 403, "forbidden"},
			{"an author X names dev:alice", token, devAuthor, 503, "unavailable"},
			{"deleted tweet", token, "https://x.com/alice/status/9999", 403, "forbidden"},
			{"not a tweet URL", token, "https://evil.example/alice/status/1", 400, "validation_failed"},
			{"http tweet URL", token, "http://x.com/alice/status/1001", 400, "validation_failed"},
			{"unknown token", "claim_nope", good, 404, "not_found"},
			{"no token", "", good, 400, "validation_failed"},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var e errorResponse
				resp := c.Do("POST", "/api/v1/agents/claim", claimBody(tt.token, tt.tweet), jsonHeader, &e)
				if resp.StatusCode != tt.status || e.ErrorDetail.Code != tt.code {
					t.Errorf("got %d %+v, want %d %s", resp.StatusCode, e, tt.status, tt.code)
				}
			})
		}
		var me meResponse
		c.Do("GET", "/api/v1/agents/me", nil, bearer(r.Agent.APIKey), &me)
		if me.Agent.IsClaimed {
			t.Fatal("a refused claim changed the agent")
		}
		c.oembed.status = 500
		if resp := c.Do("POST", "/api/v1/agents/claim", claimBody(token, good), jsonHeader, nil); resp.StatusCode != 503 {
			t.Errorf("oEmbed down: %d", resp.StatusCode)
		}
		c.oembed.status = 0
		if resp := c.Do("POST", "/api/v1/agents/claim", claimBody(token, good), jsonHeader, &me); resp.StatusCode != 200 ||
			!me.Agent.IsClaimed || me.Agent.Owner == nil || *me.Agent.Owner != "alice" {
			t.Fatalf("claim: %d %+v", resp.StatusCode, me)
		}
		c.oembed.posts["https://x.com/mallory/status/1"] = "mallory|" + r.Agent.VerificationCode
		if resp := c.Do("POST", "/api/v1/agents/claim", claimBody(token, "https://x.com/mallory/status/1"), jsonHeader, nil); resp.StatusCode != 409 {
			t.Errorf("second claim: %d", resp.StatusCode)
		}
	})
}

func TestAgentProfile(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		c := newAgentClient(t, s)
		c.register("Public_One")
		var p struct {
			Agent struct {
				Name string `json:"name"`
			} `json:"agent"`
			Badges []any `json:"badges"`
		}
		if resp := c.Get("/api/v1/agents/public_one", &p); resp.StatusCode != 200 || p.Agent.Name != "Public_One" || p.Badges == nil {
			t.Errorf("%d %+v", resp.StatusCode, p)
		}
		for _, name := range []string{"nobody", "a", "bad%20name", strings.Repeat("n", 40)} {
			if resp := c.Get("/api/v1/agents/"+name, nil); resp.StatusCode != 404 {
				t.Errorf("%s: %d", name, resp.StatusCode)
			}
		}
	})
}

func TestRegistrationIsRateLimited(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	clk := &clock{t: time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)}
	srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), PublicRate: 3, Now: clk.Now,
		Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: s.(registry.AgentStore)})))
	defer srv.Close()
	c := apitest.New(t, srv.URL)
	for i := range 3 {
		if code := c.Do("POST", "/api/v1/agents/register", strings.NewReader(fmt.Sprintf(`{"name":"rl-%d"}`, i)), jsonHeader, nil).StatusCode; code != 201 {
			t.Fatalf("registration %d: %d", i, code)
		}
	}
	var e errorResponse
	resp := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"rl-3"}`), jsonHeader, &e)
	if resp.StatusCode != 429 || e.ErrorDetail.Code != "rate_limited" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("fourth registration in a minute: %d %+v", resp.StatusCode, e)
	}
	clk.Advance(time.Minute)
	if code := c.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"rl-3"}`), jsonHeader, nil).StatusCode; code != 201 {
		t.Errorf("after a minute: %d", code)
	}
}

// TestClaimPageDevelopment: a development registry's claim page offers a
// claim as a development owner, checked as the API checks it.
func TestClaimPageDevelopment(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	srv := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), BaseURL: "https://sip.example"},
		runtimeStores{Agents: s.(registry.AgentStore)}, func(c *evaluation.Config) { c.DevelopmentClaims = true })))
	t.Cleanup(srv.Close)
	c := &agentClient{Client: apitest.New(t, srv.URL)}
	r := c.register("Devved")
	page := srv.URL + r.Agent.ClaimURL[strings.Index(r.Agent.ClaimURL, "/claim/"):]
	do := func(form url.Values) (int, string) {
		var resp *http.Response
		var err error
		if form == nil {
			resp, err = http.Get(page)
		} else {
			resp, err = http.PostForm(page, form)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := do(nil); code != 200 || !strings.Contains(body, `id="dev-claim"`) || !strings.Contains(body, `name="dev_owner"`) {
		t.Fatalf("the development claim page: %d\n%s", code, body)
	}
	if code, body := do(url.Values{"dev_owner": {"<b>not:a handle"}}); code != http.StatusBadRequest || !strings.Contains(body, "dev_owner must be") || strings.Contains(body, "<b>not") {
		t.Errorf("a bad development owner: %d\n%s", code, body)
	}
	if code, body := do(url.Values{"dev_owner": {"alice"}}); code != 200 || !strings.Contains(body, "claimed by <strong>dev:alice</strong>") {
		t.Errorf("a development claim: %d\n%s", code, body)
	}
	if code, body := do(url.Values{"dev_owner": {"bob"}}); code != 200 || !strings.Contains(body, "dev:alice") || strings.Contains(body, "dev:bob") {
		t.Errorf("a second claim: %d\n%s", code, body)
	}
}

func TestClaimPage(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	c := newAgentClient(t, s)
	r := c.register("Paged")
	page := r.Agent.ClaimURL[strings.Index(r.Agent.ClaimURL, "/claim/"):]
	base := c.BaseURL
	get := func(method, path string, form url.Values) (int, string, http.Header) {
		var resp *http.Response
		var err error
		if method == "GET" {
			resp, err = http.Get(base + path)
		} else {
			resp, err = http.PostForm(base+path, form)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	code, body, h := get("GET", page, nil)
	if code != 200 || !strings.Contains(body, r.Agent.VerificationCode) || !strings.Contains(body, `<form method="post"`) ||
		!strings.Contains(h.Get("Content-Security-Policy"), "default-src 'none'") || strings.Contains(body, "<script") {
		t.Fatalf("claim page %d %v\n%s", code, h, body)
	}
	// In the site's design, with no inline style, and the token kept to
	// the page: never cached, never sent as a referrer.
	if !strings.Contains(body, `href="/static/style.css"`) || strings.Contains(body, "<style") ||
		strings.Contains(h.Get("Content-Security-Policy"), "unsafe-inline") || h.Get("Cache-Control") != "no-store" || h.Get("Referrer-Policy") != "no-referrer" {
		t.Fatalf("claim page %d %v\n%s", code, h, body)
	}
	if code, body, _ := get("POST", page, url.Values{"tweet_url": {"javascript:alert(1)"}}); code != 400 || !strings.Contains(body, "tweet_url must be") {
		t.Errorf("bad address: %d\n%s", code, body)
	}
	// Not a development registry: no claim without X is offered, and a
	// crafted one is refused as the API refuses it.
	if strings.Contains(body, "dev_owner") {
		t.Errorf("the claim page offers a development claim:\n%s", body)
	}
	if code, body, _ := get("POST", page, url.Values{"dev_owner": {"alice"}}); code != http.StatusForbidden || !strings.Contains(body, "through a post on X only") {
		t.Errorf("a crafted development claim: %d\n%s", code, body)
	}
	c.oembed.posts["https://x.com/pagedowner/status/7"] = "pagedowner|claiming " + r.Agent.VerificationCode
	if code, body, _ := get("POST", page, url.Values{"tweet_url": {"https://x.com/pagedowner/status/7"}}); code != 200 || !strings.Contains(body, "@pagedowner") {
		t.Errorf("claim: %d\n%s", code, body)
	}
	if code, body, _ := get("GET", "/claim/claim_nope", nil); code != 404 || !strings.Contains(body, "not valid") {
		t.Errorf("unknown token: %d\n%s", code, body)
	}
}
