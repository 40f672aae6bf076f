package api_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/api/apitest"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/siptest"
)

type validation struct {
	Success  bool   `json:"success"`
	Valid    bool   `json:"valid"`
	Path     string `json:"path"`
	Errors   int    `json:"errors"`
	Problems []struct {
		Rule     string `json:"rule"`
		Severity string `json:"severity"`
		Line     int    `json:"line"`
		Column   int    `json:"column"`
		Message  string `json:"message"`
		Hint     string `json:"hint"`
	} `json:"problems"`
	Preview struct {
		Change          string `json:"change"`
		Number          int    `json:"sip"`
		Version         string `json:"version"`
		PreviousVersion string `json:"previous_version"`
		Handler         string `json:"handler"`
		NextNumber      int    `json:"next_number"`
		Prerequisites   []struct {
			ID     string `json:"id"`
			Known  bool   `json:"known"`
			Status string `json:"status"`
		} `json:"prerequisites"`
	} `json:"preview"`
}

func (v validation) errorRules() []string {
	var out []string
	for _, p := range v.Problems {
		if p.Severity == "error" {
			out = append(out, p.Rule)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func validateBody(t *testing.T, content string, isNew bool) *bytes.Reader {
	t.Helper()
	b, err := json.Marshal(map[string]any{"content": content, "new": isNew})
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(b)
}

// TestValidateSIP: the endpoint reports what the repository's check
// reports for the same file beside the registry's SIPs, at the same lines.
func TestValidateSIP(t *testing.T) {
	t.Parallel()
	forEachBackend(t, func(t *testing.T, c *client, s registry.Store) {
		files := fixture()
		syncFiles(t, s, "c1", files...)
		sip2 := string(files[1].Content)
		for _, tt := range []struct {
			name    string
			content string
			isNew   bool
			rules   []string
			change  string
		}{
			{"a new SIP", string(siptest.SIP(5, "delta", "draft", "beta").Content), true, nil, "new"},
			{"a taken number", string(siptest.SIP(3, "delta", "draft").Content), true, []string{"file-name-mismatch", "sip-duplicate"}, "new"},
			{"a taken id", string(siptest.SIP(5, "alpha", "draft").Content), true, []string{"id-duplicate"}, "new"},
			{"an unknown prerequisite", string(siptest.SIP(5, "delta", "draft", "nope").Content), true, []string{"prerequisite-missing"}, "new"},
			{"an edit without its version", sip2 + "\nMore.\n", false, []string{"updated-at-not-advanced", "version-not-bumped"}, "edit"},
			{"an edit with its version", string(siptest.Edit(files[1], "1.0.1", "2026-11-25T10:00:00Z", "More.").Content), false, nil, "edit"},
			{"no frontmatter", "# Hello\n", true, []string{"frontmatter-missing"}, ""},
			{"hostile YAML", "---\na: &a [*a, *a]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a]\nc: [*b,*b,*b,*b,*b,*b,*b,*b]\n---\n", true, nil, ""},
		} {
			t.Run(tt.name, func(t *testing.T) {
				var got validation
				resp := c.do("POST", "/api/v1/sips/validate", validateBody(t, tt.content, tt.isNew), jsonHeader, &got)
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				if tt.name == "hostile YAML" {
					if got.Valid {
						t.Errorf("hostile YAML valid")
					}
					return
				}
				if r := got.errorRules(); !slices.Equal(r, tt.rules) {
					t.Errorf("errors %v, want %v (%+v)", r, tt.rules, got.Problems)
				}
				if got.Valid != (len(tt.rules) == 0) || got.Preview.Change != tt.change {
					t.Errorf("valid %v change %q, want %v %q", got.Valid, got.Preview.Change, len(tt.rules) == 0, tt.change)
				}
				for _, p := range got.Problems {
					if p.Line == 0 && p.Rule != "frontmatter-missing" || p.Message == "" || p.Hint == "" {
						t.Errorf("problem without its place, message or hint: %+v", p)
					}
				}
			})
		}
		var got validation
		c.do("POST", "/api/v1/sips/validate", validateBody(t, string(siptest.SIP(5, "delta", "draft", "beta", "gone").Content), true), jsonHeader, &got)
		if p := got.Preview; p.Number != 5 || p.NextNumber != 5 || p.Handler != "identity_check_handler" || len(p.Prerequisites) != 2 ||
			!p.Prerequisites[0].Known || p.Prerequisites[0].Status != "active" || p.Prerequisites[1].Known {
			t.Errorf("preview %+v", p)
		}
	})
}

// TestValidateSIPAfterSync: the endpoint checks against the registry as
// it is now, not as it was at the first request.
func TestValidateSIPAfterSync(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	c := newClient(t, s)
	files := fixture()
	syncFiles(t, s, "c1", files...)
	draft := string(siptest.SIP(5, "delta", "draft").Content)
	var got validation
	c.do("POST", "/api/v1/sips/validate", validateBody(t, draft, true), jsonHeader, &got)
	if !got.Valid {
		t.Fatalf("not valid: %+v", got.Problems)
	}
	syncFiles(t, s, "c2", append(files, siptest.SIP(5, "epsilon", "draft"))...)
	c.do("POST", "/api/v1/sips/validate", validateBody(t, draft, true), jsonHeader, &got)
	if r := got.errorRules(); !slices.Contains(r, "sip-duplicate") {
		t.Errorf("after the sync: errors %v, want sip-duplicate", r)
	}
}

func TestValidateSIPBadRequests(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	c := newClient(t, s)
	syncFiles(t, s, "c1", fixture()...)
	huge := strings.Repeat("a", 1<<20)
	for _, tt := range []struct {
		name   string
		body   string
		header http.Header
		status int
	}{
		{"empty content", `{"content": ""}`, jsonHeader, 400},
		{"no body", ``, jsonHeader, 400},
		{"unknown field", `{"content": "x", "path": "/etc/passwd"}`, jsonHeader, 400},
		{"not JSON", `content=x`, http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, 415},
		{"over 1 MiB", `{"content": "` + huge + `"}`, jsonHeader, 413},
		{"a NUL", `{"content": "a\u0000b"}`, jsonHeader, 400},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var e errorResponse
			resp := c.do("POST", "/api/v1/sips/validate", strings.NewReader(tt.body), tt.header, &e)
			if resp.StatusCode != tt.status || e.Success {
				t.Errorf("status %d, want %d", resp.StatusCode, tt.status)
			}
		})
	}
}

// TestValidateSIPRateLimit: one address checks at most 60 files at once,
// then two a second; another address is not affected.
func TestValidateSIPRateLimit(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	syncFiles(t, s, "c1", fixture()...)
	now := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(api.NewServer(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return now }}))
	t.Cleanup(srv.Close)
	c := apitest.New(t, srv.URL)
	draft := string(siptest.SIP(5, "delta", "draft").Content)
	for i := range 60 {
		if resp := c.Do("POST", "/api/v1/sips/validate", validateBody(t, draft, true), jsonHeader, nil); resp.StatusCode != 200 {
			t.Fatalf("check %d: status %d", i, resp.StatusCode)
		}
	}
	var e errorResponse
	resp := c.Do("POST", "/api/v1/sips/validate", validateBody(t, draft, true), jsonHeader, &e)
	if resp.StatusCode != 429 || e.ErrorDetail.Code != "rate_limited" || resp.Header.Get("Retry-After") == "" {
		t.Errorf("61st check: status %d code %q", resp.StatusCode, e.ErrorDetail.Code)
	}
}

// TestValidateSIPDuringSyncs: checks running while syncs are applied
// each see one whole registry (the number is free before the sync that
// takes it, and taken after), and race nothing.
func TestValidateSIPDuringSyncs(t *testing.T) {
	t.Parallel()
	s := backends["sqlite"](t)
	syncFiles(t, s, "c1", fixture()...)
	srv := httptest.NewServer(api.NewServer(api.Config{Catalog: registry.NewCatalog(s), Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	draft := string(siptest.SIP(5, "delta", "draft").Content)
	done := make(chan []string)
	for range 4 {
		go func() {
			var rules []string
			for range 10 {
				resp, err := http.Post(srv.URL+"/api/v1/sips/validate", "application/json", validateBody(t, draft, true))
				if err != nil {
					done <- []string{err.Error()}
					return
				}
				var v validation
				json.NewDecoder(resp.Body).Decode(&v)
				resp.Body.Close()
				rules = append(rules, strings.Join(v.errorRules(), ","))
			}
			done <- rules
		}()
	}
	files := fixture()
	syncFiles(t, s, "c2", append(files, siptest.SIP(5, "epsilon", "draft"))...)
	for range 4 {
		for _, r := range <-done {
			if r != "" && r != "sip-duplicate" && r != "file-name-mismatch,sip-duplicate" {
				t.Errorf("a check saw %q", r)
			}
		}
	}
}
