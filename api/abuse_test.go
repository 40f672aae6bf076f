package api_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/registrytest"
)

// syncBuffer is a log sink the server writes from many goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// TestSecretsStayOutOfTheLogs: a full flow (register, open the claim page,
// claim through it, take PoAW, read the challenge) logs every request, and
// none of the secrets it created: the API key, the claim token, the
// challenge's nonce.
func TestSecretsStayOutOfTheLogs(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		logs := &syncBuffer{}
		w := newWorldWith(t, s, func(c *api.Config) { c.Logger = slog.New(slog.NewJSONHandler(logs, nil)) })
		a := w.agent("secretive-1")
		// The claim page is HTML, outside the API document: plain HTTP.
		resp, err := http.Get(w.BaseURL + "/claim/" + a.claim)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("claim page: %v %v", resp, err)
		}
		resp.Body.Close()
		w.oembed.posts["https://x.com/owner/status/9"] = "owner|Verifying my agent " + a.code
		resp, err = http.PostForm(w.BaseURL+"/claim/"+a.claim, url.Values{"tweet_url": {"https://x.com/owner/status/9"}})
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("claim through the page: %v %v", resp, err)
		}
		resp.Body.Close()
		a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		var st startBody
		a.call("POST", "/api/v1/evaluations/poaw/start", "", &st)
		var ch struct {
			Challenge struct {
				Nonce string `json:"nonce"`
			} `json:"challenge"`
		}
		a.call("GET", st.Challenge.FetchURL, "", &ch)
		out := logs.String()
		if !strings.Contains(out, `"path":"/claim/[redacted]"`) {
			t.Errorf("the claim page's requests are not logged with the token redacted:\n%s", out)
		}
		for name, secret := range map[string]string{"API key": a.key, "claim token": a.claim, "challenge nonce": ch.Challenge.Nonce} {
			if secret == "" {
				t.Fatalf("the flow created no %s", name)
			}
			if strings.Contains(out, secret) {
				t.Errorf("the logs hold the %s", name)
			}
		}
	})
}

// TestNULIsBadInput: a NUL character in a body field, a path or a query
// answers 400 validation_failed on both stores, never 500.
func TestNULIsBadInput(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("nul-1")
		a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		for _, tt := range []struct {
			name, method, path, body string
			auth                     bool
		}{
			{"agent name", "POST", "/api/v1/agents/register", `{"name":"nul\u0000agent"}`, false},
			{"identity", "PUT", "/api/v1/agents/me/identity", `{"identity_md":"# Me\u0000"}`, true},
			{"submission", "POST", "/api/v1/evaluations/poaw/submit", `{"challenge_id":"ch_\u0000","hash":"x"}`, true},
			{"path", "GET", "/api/v1/agents/nul%00agent", "", false},
			{"evaluation path", "POST", "/api/v1/evaluations/po%00aw/register", "", true},
			{"query", "GET", "/api/v1/evaluations/poaw/results?agent_id=a%00b", "", false},
		} {
			t.Run(tt.name, func(t *testing.T) {
				h := http.Header{}
				if tt.body != "" {
					h.Set("Content-Type", "application/json")
				}
				if tt.auth {
					h.Set("Authorization", "Bearer "+a.key)
				}
				var e errorResponse
				resp := w.Do(tt.method, tt.path, strings.NewReader(tt.body), h, &e)
				if resp.StatusCode != 400 || e.ErrorDetail.Code != "validation_failed" {
					t.Errorf("%s %s: %d %+v, want 400 validation_failed", tt.method, tt.path, resp.StatusCode, e)
				}
			})
		}
	})
}

// TestKeyRotation: an agent rotates its API key; the new key works, the
// old one is refused at once on the replica that rotated it and within a
// second on another replica that had it cached; rotating again with the
// old key is refused.
func TestKeyRotation(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		other := httptest.NewServer(api.NewServer(withRuntime(api.Config{Catalog: registry.NewCatalog(s), Now: w.clock.Now, Logger: slog.New(slog.DiscardHandler)}, runtimeStores{Agents: s.(registry.AgentStore), Evaluations: s.(registrytest.FullStore), Jobs: s.(jobStore), Sessions: s.(sessionStore)})))
		t.Cleanup(other.Close)
		replica := apitest.New(t, other.URL)
		a := w.agent("rotating-1")
		status := func(c *apitest.Client, key string) int {
			return c.Do("POST", "/api/v1/evaluations/poaw/register", nil, bearer(key), nil).StatusCode
		}
		if code := status(replica, a.key); code != 201 { // the replica now remembers the old key
			t.Fatalf("register on the replica: %d", code)
		}
		var k struct {
			APIKey string `json:"api_key"`
		}
		old := a.key
		if code := a.call("POST", "/api/v1/agents/me/keys", "", &k); code != 201 || k.APIKey == "" || k.APIKey == old {
			t.Fatalf("rotate: %d %+v", code, k)
		}
		if code := status(w.Client, old); code != 401 {
			t.Errorf("the old key on the replica that rotated it: %d, want 401", code)
		}
		if code := status(w.Client, k.APIKey); code != 200 {
			t.Errorf("the new key: %d, want 200 (the open registration)", code)
		}
		w.clock.Advance(time.Second)
		if code := status(replica, old); code != 401 {
			t.Errorf("the old key on another replica a second later: %d, want 401", code)
		}
		a.key = old
		if code := a.call("POST", "/api/v1/agents/me/keys", "", nil); code != 401 {
			t.Errorf("rotating with the old key: %d, want 401", code)
		}
	})
}

// TestPrivateAgentsShowNothingToOthers: an agent that keeps its results
// private shows no points and no badges on its profile (points decode
// into what it passed), and its passes are not counted on the pages.
func TestPrivateAgentsShowNothingToOthers(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("hidden-1")
		a.poaw(t, false)
		if code := a.call("PATCH", "/api/v1/agents/me", `{"results_public":false}`, nil); code != 200 {
			t.Fatalf("going private: %d", code)
		}
		var p struct {
			Agent struct {
				Points *float64 `json:"points"`
			} `json:"agent"`
			Badges []any `json:"badges"`
		}
		w.Get("/api/v1/agents/hidden-1", &p)
		if p.Agent.Points != nil || len(p.Badges) != 0 {
			t.Errorf("a private agent's profile shows points %v and badges %v", p.Agent.Points, p.Badges)
		}
		resp, err := http.Get(w.BaseURL + "/agents/hidden-1")
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(body), "points</p>") {
			t.Errorf("the profile page shows a private agent's points")
		}
		counts, err := s.(registrytest.FullStore).PassCounts(t.Context())
		if err != nil || counts["poaw"] != 0 {
			t.Errorf("pass counts %v, %v; want the private pass not counted", counts, err)
		}
	})
}

// TestLinksComeFromTheConfiguredURLOnly: claim_url and fetch_url are
// absolute, built from the configured public URL, whatever Host header
// the request carries.
func TestLinksComeFromTheConfiguredURLOnly(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorldWith(t, s, func(c *api.Config) { c.BaseURL = "https://sip.example" })
		req, _ := http.NewRequest("POST", w.BaseURL+"/api/v1/agents/register", strings.NewReader(`{"name":"hosted-1"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var r registered
		json.NewDecoder(resp.Body).Decode(&r)
		resp.Body.Close()
		if !strings.HasPrefix(r.Agent.ClaimURL, "https://sip.example/claim/") {
			t.Errorf("claim_url %q; want it on the configured URL, not the Host header", r.Agent.ClaimURL)
		}
		a := &testAgent{w: w, name: "hosted-1", key: r.Agent.APIKey}
		a.call("POST", "/api/v1/evaluations/poaw/register", "", nil)
		var st startBody
		a.call("POST", "/api/v1/evaluations/poaw/start", "", &st)
		if !strings.HasPrefix(st.Challenge.FetchURL, "https://sip.example/api/v1/evaluations/poaw/challenge/") {
			t.Errorf("fetch_url %q; want an absolute URL on the configured one", st.Challenge.FetchURL)
		}
	})
}

// TestTrustedProxies: behind a trusted proxy, rate limits count the
// client X-Forwarded-For names; without one, the header is ignored, so a
// client cannot escape its limit by inventing addresses.
func TestTrustedProxies(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	for _, tt := range []struct {
		name    string
		trusted bool
	}{{"trusted", true}, {"not trusted", false}} {
		t.Run(tt.name, func(t *testing.T) {
			w := newWorldWith(t, s, func(c *api.Config) {
				if tt.trusted {
					c.TrustedProxies = []*net.IPNet{{IP: net.IPv4(127, 0, 0, 1).To4(), Mask: net.CIDRMask(32, 32)}}
				}
			})
			register := func(name, from string) int {
				h := http.Header{"Content-Type": {"application/json"}, "X-Forwarded-For": {from}}
				return w.Do("POST", "/api/v1/agents/register", strings.NewReader(`{"name":"`+name+`"}`), h, nil).StatusCode
			}
			limited := false
			for i := range 100 {
				if register(fmt.Sprintf("xff-%s-%d", strings.ReplaceAll(tt.name, " ", ""), i), "203.0.113.1") == 429 {
					limited = true
					break
				}
			}
			if !limited {
				t.Fatal("no rate limit met in 100 registrations")
			}
			code := register("xff-"+strings.ReplaceAll(tt.name, " ", "")+"-other", "203.0.113.2")
			if tt.trusted && code != 201 || !tt.trusted && code != 429 {
				t.Errorf("another forwarded address: %d", code)
			}
		})
	}
}

// TestRegistrationsAndClaimsHaveTheirOwnLimits: an address that used up
// its registrations can still claim an agent.
func TestRegistrationsAndClaimsHaveTheirOwnLimits(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a := w.agent("bucketed-0")
		for i := 1; ; i++ {
			code := w.Do("POST", "/api/v1/agents/register", strings.NewReader(fmt.Sprintf(`{"name":"bucketed-%d"}`, i)), jsonHeader, nil).StatusCode
			if code == 429 {
				break
			}
			if i > 100 {
				t.Fatal("no rate limit met in 100 registrations")
			}
		}
		a.claimBy(t, "bucketowner") // fails the test on 429
	})
}

// TestMessageFloodIsLimited: one agent posting as fast as it can is
// stopped after its burst with 429 and Retry-After, while the other
// participant can still post; after a second it may post again.
func TestMessageFloodIsLimited(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("flood-a"), w.agent("flood-b")
		a.joinLive(t, "live-ten")
		st := b.joinLive(t, "live-ten")
		path := "/api/v1/evaluations/live-ten/sessions/" + st.Session.ID + "/messages"
		posted := 0
		for range 100 {
			code := a.call("POST", path, `{"content":"spam"}`, nil)
			if code == 429 {
				break
			}
			if code != 201 {
				t.Fatalf("post: %d", code)
			}
			posted++
		}
		if posted != 60 {
			t.Errorf("one agent posted %d messages before the limit, want its burst of 60", posted)
		}
		if code := b.call("POST", path, `{"content":"still here"}`, nil); code != 201 {
			t.Errorf("the other participant: %d, want 201", code)
		}
		w.clock.Advance(time.Second)
		if code := a.call("POST", path, `{"content":"later"}`, nil); code != 201 {
			t.Errorf("a second later: %d, want 201", code)
		}
	})
}

// privateLive is a graded live session of a public and a private agent,
// each of which posted one message.
type privateLive struct {
	pub, priv             *testAgent
	pubResult, privResult string
}

func (w *world) liveWithPrivate(t *testing.T, pubName, privName, pubSays, privSays string) privateLive {
	t.Helper()
	ls := privateLive{pub: w.agent(pubName), priv: w.agent(privName)}
	ls.priv.call("PATCH", "/api/v1/agents/me", `{"results_public":false}`, nil)
	ls.pub.joinLive(t, "live-ten")
	st := ls.priv.joinLive(t, "live-ten")
	msgs := "/api/v1/evaluations/live-ten/sessions/" + st.Session.ID + "/messages"
	ls.pub.call("POST", msgs, fmt.Sprintf(`{"content":%q}`, pubSays), nil)
	ls.priv.call("POST", msgs, fmt.Sprintf(`{"content":%q}`, privSays), nil)
	g := w.proctor(t, pubName+"-proctor").passLive(t, st.Session.ID)
	privID := ls.priv.id(t)
	for _, r := range g.Results {
		if r.AgentID == privID {
			ls.privResult = r.ID
		} else {
			ls.pubResult = r.ID
		}
	}
	return ls
}

// TestTranscriptsHidePrivateParticipants: the public transcript of a live
// session shows a participant who keeps results private only as "a private
// agent", without its messages; that participant still sees its own.
func TestTranscriptsHidePrivateParticipants(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		ls := w.liveWithPrivate(t, "open-talker", "quiet-talker", "hello from the open one", "a secret plan")
		private := ls.priv
		path := "/api/v1/evaluations/live-ten/results/" + ls.pubResult + "/transcript"
		raw := readAll(t, w.Get(path, nil))
		if strings.Contains(raw, "quiet-talker") || strings.Contains(raw, "a secret plan") || strings.Contains(raw, private.id(t)) {
			t.Errorf("the public transcript shows the private participant:\n%s", raw)
		}
		if !strings.Contains(raw, "hello from the open one") {
			t.Errorf("the public transcript lacks the public participant's message:\n%s", raw)
		}
		if code := private.call("GET", path, "", nil); code != 200 {
			t.Fatalf("the private participant reads the transcript: %d", code)
		}
		resp := w.Do("GET", path, nil, bearer(private.key), nil)
		if mine := readAll(t, resp); !strings.Contains(mine, "a secret plan") {
			t.Errorf("the private participant does not see its own message:\n%s", mine)
		}
	})
}

// TestPrivateParticipationShowsNowhere walks every page and endpoint that
// shows agents or results, anonymously, after a live session that a public
// and a private agent passed together: the private agent's name and id
// appear nowhere but on its own profile, which shows no points or badges.
func TestPrivateParticipationShowsNowhere(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		ls := w.liveWithPrivate(t, "walk-public", "walk-private", "hello", "private words")
		priv, pubResult, privResult := ls.priv, ls.pubResult, ls.privResult
		privID := priv.id(t)
		get := func(path string) (int, string) {
			resp, err := http.Get(w.BaseURL + path)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		for _, path := range []string{
			"/", "/evaluations", "/evaluations/SIP-24", "/agents/walk-public", "/agents/walk-public-proctor", "/results/" + pubResult,
			"/api/v1/evaluations", "/api/v1/evaluations/live-ten", "/api/v1/evaluations/live-ten/results",
			"/api/v1/agents/walk-public", "/api/v1/results/" + pubResult, "/api/v1/results/" + pubResult + "/trace",
			"/api/v1/evaluations/live-ten/results/" + pubResult + "/transcript",
		} {
			code, body := get(path)
			if code != 200 {
				t.Errorf("GET %s: %d", path, code)
			}
			if strings.Contains(body, "walk-private") || strings.Contains(body, privID) || strings.Contains(body, "private words") {
				t.Errorf("GET %s shows the private participant", path)
			}
		}
		for _, path := range []string{"/results/" + privResult, "/api/v1/results/" + privResult, "/api/v1/results/" + privResult + "/trace",
			"/api/v1/evaluations/live-ten/results/" + privResult + "/transcript"} {
			if code, _ := get(path); code != 404 {
				t.Errorf("GET %s: %d, want 404 (a private agent's result)", path, code)
			}
		}
		for _, path := range []string{"/agents/walk-private", "/api/v1/agents/walk-private"} {
			if code, body := get(path); code != 200 || strings.Contains(body, "live-ten") || strings.Contains(body, "Ten Voices") || strings.Contains(body, `"points":3`) {
				t.Errorf("GET %s: %d, or it shows what the private agent passed:\n%s", path, code, body)
			}
		}
	})
}

// TestLongTranscriptsComeInPages: a session of 450 messages is read in
// pages of 200, 200 and 50, each naming where the next begins.
func TestLongTranscriptsComeInPages(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("long-a"), w.agent("long-b")
		a.joinLive(t, "live-ten")
		st := b.joinLive(t, "live-ten")
		msgs := "/api/v1/evaluations/live-ten/sessions/" + st.Session.ID + "/messages"
		for i := range 450 {
			if i%50 == 0 {
				w.clock.Advance(10 * time.Second) // within the message limits
			}
			p := a
			if i%2 == 1 {
				p = b
			}
			if code := p.call("POST", msgs, fmt.Sprintf(`{"content":"m%d"}`, i), nil); code != 201 {
				t.Fatalf("post %d: %d", i, code)
			}
		}
		proc := w.proctor(t, "long-proctor")
		g := proc.passLive(t, st.Session.ID)
		path := "/api/v1/evaluations/live-ten/results/" + g.Results[0].ID + "/transcript"
		var sizes []int
		since := int64(0)
		for range 5 {
			var page struct {
				Messages  []struct{ Sequence int64 } `json:"messages"`
				NextSince *int64                     `json:"next_since"`
			}
			if code := w.Get(fmt.Sprintf("%s?since=%d", path, since), &page).StatusCode; code != 200 {
				t.Fatalf("page after %d: %d", since, code)
			}
			sizes = append(sizes, len(page.Messages))
			if len(page.Messages) > 0 && page.Messages[0].Sequence != since+1 {
				t.Errorf("page after %d starts at %d", since, page.Messages[0].Sequence)
			}
			if page.NextSince == nil {
				break
			}
			since = *page.NextSince
		}
		if fmt.Sprint(sizes) != "[200 200 50]" {
			t.Errorf("pages of %v messages, want [200 200 50]", sizes)
		}
	})
}

// TestNewEndpointsRefuseBadInput: key rotation and the paged transcript
// answer malformed, unauthorised and out-of-range requests clearly, and a
// refused rotation changes nothing.
func TestNewEndpointsRefuseBadInput(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, _ *client, s registry.Store) {
		w := newWorld(t, s)
		a, b := w.agent("bad-in-a"), w.agent("bad-in-b")
		a.joinLive(t, "live-ten")
		st := b.joinLive(t, "live-ten")
		a.call("POST", "/api/v1/evaluations/live-ten/sessions/"+st.Session.ID+"/messages", `{"content":"hi"}`, nil)
		proc := w.proctor(t, "bad-in-proctor")
		g := proc.passLive(t, st.Session.ID)
		transcript := "/api/v1/evaluations/live-ten/results/" + g.Results[0].ID + "/transcript"
		for _, tt := range []struct {
			name, method, path, body string
			header                   http.Header
			want                     int
		}{
			{"rotate without a key", "POST", "/api/v1/agents/me/keys", "", nil, 401},
			{"rotate with a wrong key", "POST", "/api/v1/agents/me/keys", "", bearer("sip_000000000000_wrong"), 401},
			{"rotate with fields", "POST", "/api/v1/agents/me/keys", `{"key":"mine"}`, http.Header{"Content-Type": {"application/json"}, "Authorization": {"Bearer " + a.key}}, 400},
			{"rotate with a form", "POST", "/api/v1/agents/me/keys", `key=mine`, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Authorization": {"Bearer " + a.key}}, 415},
			{"transcript since text", "GET", transcript + "?since=abc", "", nil, 400},
			{"transcript since negative", "GET", transcript + "?since=-1", "", nil, 400},
			{"transcript limit zero", "GET", transcript + "?limit=0", "", nil, 400},
			{"transcript limit too large", "GET", transcript + "?limit=201", "", nil, 400},
			{"transcript of no result", "GET", "/api/v1/evaluations/live-ten/results/res_none/transcript", "", nil, 404},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if code := w.Do(tt.method, tt.path, strings.NewReader(tt.body), tt.header, nil).StatusCode; code != tt.want {
					t.Errorf("%s %s: %d, want %d", tt.method, tt.path, code, tt.want)
				}
			})
		}
		// Nothing was rotated: the original key still works.
		if code := a.call("GET", "/api/v1/agents/me", "", nil); code != 200 {
			t.Errorf("the key after refused rotations: %d, want 200", code)
		}
	})
}

// TestEightClientsDownloadALongTranscript: a session of 1,500 messages of
// 4 KiB (6 MiB in all) read at once by eight clients, through every page
// of the API and the result page, leaves the server's heap where it was:
// each read is bounded (pages of 200 messages, 500 on the web page), so
// nothing holds a whole transcript per client. It measures the process's
// heap, so it runs alone: not in parallel with other tests, and one store
// after the other.
func TestEightClientsDownloadALongTranscript(t *testing.T) {
	for name, open := range backends {
		t.Run(name, func(t *testing.T) { eightClients(t, open(t)) })
	}
}

func eightClients(t *testing.T, s registry.Store) {
	{
		w := newWorld(t, s)
		a, b := w.agent("long8-a"), w.agent("long8-b")
		a.joinLive(t, "live-ten")
		st := b.joinLive(t, "live-ten")
		content := strings.Repeat("x", 4<<10)
		sessions := s.(sessionStore)
		for i := range 1500 {
			from := a
			if i%2 == 1 {
				from = b
			}
			if _, err := sessions.PostMessage(t.Context(), &evaluation.SessionMessage{ID: fmt.Sprintf("msg_long8_%d", i), SessionID: st.Session.ID,
				SenderID: from.id(t), Role: "participant", Content: content, CreatedAt: w.clock.Now()}); err != nil {
				t.Fatal(err)
			}
		}
		proc := w.proctor(t, "long8-proctor")
		g := proc.passLive(t, st.Session.ID)
		path := "/api/v1/evaluations/live-ten/results/" + g.Results[0].ID + "/transcript"
		heap := func() uint64 {
			runtime.GC()
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			return m.HeapAlloc
		}
		before := heap()
		var wg sync.WaitGroup
		var mu sync.Mutex
		var peak uint64
		for i := range 8 {
			wg.Go(func() {
				since := int64(0)
				for {
					var page struct {
						Messages  []json.RawMessage `json:"messages"`
						NextSince *int64            `json:"next_since"`
					}
					// Plain HTTP: holding 12 MiB of pages to the OpenAPI
					// document would measure the test's client.
					resp, err := http.Get(fmt.Sprintf("%s%s?since=%d", w.BaseURL, path, since))
					if err != nil {
						t.Error(err)
						return
					}
					err = json.NewDecoder(resp.Body).Decode(&page)
					resp.Body.Close()
					if resp.StatusCode != 200 || err != nil {
						t.Errorf("page after %d: %d %v", since, resp.StatusCode, err)
						return
					}
					var m runtime.MemStats
					runtime.ReadMemStats(&m)
					mu.Lock()
					peak = max(peak, m.HeapAlloc)
					mu.Unlock()
					if page.NextSince == nil {
						break
					}
					since = *page.NextSince
				}
				if i > 0 {
					return // one client also reads the web page (500 messages)
				}
				resp, err := http.Get(w.BaseURL + "/results/" + g.Results[0].ID)
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("the result page: %d", resp.StatusCode)
				}
			})
		}
		wg.Wait()
		// The clients themselves hold one page each (under 1 MiB); 64 MiB
		// is far below what eight whole transcripts in memory at once
		// would take with their JSON (well over 100 MiB).
		after := heap()
		t.Logf("heap: %d MiB before, peak %d MiB, %d MiB after", before>>20, peak>>20, after>>20)
		if after > before+16<<20 {
			t.Errorf("heap grew from %d MiB to %d MiB after eight downloads", before>>20, after>>20)
		}
		if peak > before+64<<20 {
			t.Errorf("heap peaked at %d MiB during eight downloads (from %d MiB)", peak>>20, before>>20)
		}
	}
}
