package bot_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/inbox"
)

func TestNewRefusesAnEmptySecret(t *testing.T) {
	for _, secrets := range [][]string{nil, {}, {""}, {"  "}} {
		_, err := bot.New(bot.Config{AppID: 1, WebhookSecrets: secrets})
		if !errors.Is(err, bot.ErrNoSecret) {
			t.Errorf("secrets %q: err = %v, want ErrNoSecret", secrets, err)
		}
	}
}

type webhookRequest struct {
	name        string
	event, guid string
	contentType string
	signature   func(body []byte) string
	body        []byte
	chunked     bool
	wantStatus  int
	wantStored  bool
}

func (h *harness) post(r webhookRequest) *http.Response {
	h.t.Helper()
	var body io.Reader = bytes.NewReader(r.body)
	if r.chunked {
		body = io.MultiReader(bytes.NewReader(r.body)) // no length: sent chunked
	}
	req, _ := http.NewRequest("POST", h.srv.URL+api.WebhookPath, body)
	if r.contentType != "-" {
		req.Header.Set("Content-Type", r.contentType)
	}
	if r.event != "" {
		req.Header.Set("X-GitHub-Event", r.event)
	}
	if r.guid != "" {
		req.Header.Set("X-GitHub-Delivery", r.guid)
	}
	if r.signature != nil {
		if s := r.signature(r.body); s != "" {
			req.Header.Set("X-Hub-Signature-256", s)
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	h.api.Check(req, resp, raw)
	return resp
}

// TestWebhookIntake: every malformed, unsigned, oversized or unwanted
// delivery gets a clear status and leaves nothing in the inbox.
func TestWebhookIntake(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t), func(c *bot.Config) { c.WebhookSecrets = []string{secret, "the previous secret"} })
		opened, _ := os.ReadFile("testdata/github-webhooks/pull_request/opened.payload.json")
		draft, _ := os.ReadFile("testdata/github-webhooks/pull_request/converted_to_draft.with-installation.payload.json")
		good := func(b []byte) string { return sign(b, secret) }
		huge := bytes.Repeat([]byte(" "), bot.MaxWebhookBody+1)
		for _, tc := range []webhookRequest{
			{name: "valid", event: "pull_request", body: opened, signature: good, wantStatus: 202, wantStored: true},
			{name: "previous secret while rotating", event: "pull_request", body: opened,
				signature: func(b []byte) string { return sign(b, "the previous secret") }, wantStatus: 202, wantStored: true},
			{name: "charset parameter", event: "pull_request", body: opened, contentType: "application/json; charset=utf-8", signature: good, wantStatus: 202, wantStored: true},
			{name: "no signature", event: "pull_request", body: opened, wantStatus: 401},
			{name: "wrong secret", event: "pull_request", body: opened, signature: func(b []byte) string { return sign(b, "guess") }, wantStatus: 401},
			{name: "tampered body", event: "pull_request", body: opened, signature: func(b []byte) string { return sign(append([]byte{' '}, b...), secret) }, wantStatus: 401},
			{name: "sha1 only", event: "pull_request", body: opened, signature: func([]byte) string { return "sha1=0123456789abcdef0123456789abcdef01234567" }, wantStatus: 401},
			{name: "not hex", event: "pull_request", body: opened, signature: func([]byte) string { return "sha256=zz" }, wantStatus: 401},
			{name: "no event header", body: opened, signature: good, wantStatus: 400},
			{name: "no delivery id", event: "pull_request", guid: "-", body: opened, signature: good, wantStatus: 400},
			{name: "form encoded", event: "pull_request", contentType: "application/x-www-form-urlencoded", body: opened, signature: good, wantStatus: 415},
			{name: "no content type", event: "pull_request", contentType: "-", body: opened, signature: good, wantStatus: 415},
			{name: "signed but not JSON", event: "pull_request", body: []byte("{not json"), signature: good, wantStatus: 400},
			{name: "over 25 MiB", event: "pull_request", body: huge, signature: good, wantStatus: 413},
			{name: "over 25 MiB, chunked", event: "pull_request", body: huge, chunked: true, signature: good, wantStatus: 413},
			{name: "unknown event", event: "brand_new_event", body: []byte(`{"action":"created"}`), signature: good, wantStatus: 202},
			{name: "unhandled action", event: "pull_request", body: draft, signature: good, wantStatus: 202},
			{name: "ping", event: "ping", body: []byte(`{"zen":"Design for failure.","hook":{"app_id":1}}`), signature: good, wantStatus: 202},
		} {
			t.Run(tc.name, func(t *testing.T) {
				if tc.guid == "" {
					tc.guid = newGUID()
				} else if tc.guid == "-" {
					tc.guid = ""
				}
				if tc.contentType == "" {
					tc.contentType = "application/json"
				}
				resp := h.post(tc)
				if resp.StatusCode != tc.wantStatus {
					t.Errorf("status %d, want %d", resp.StatusCode, tc.wantStatus)
				}
				if tc.guid == "" {
					return
				}
				_, err := h.store.Delivery(t.Context(), tc.guid)
				if stored := err == nil; stored != tc.wantStored {
					t.Errorf("stored = %v (%v), want %v", stored, err, tc.wantStored)
				}
			})
		}
	})
}

// TestEveryRealPayloadIsAccepted: each of the octokit payloads is
// acknowledged (never a 4xx or 5xx that would make GitHub report a failed
// delivery), and the ones the App acts on are queued.
func TestEveryRealPayloadIsAccepted(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		n := 0
		err := filepath.WalkDir("testdata/github-webhooks", func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".json") {
				return err
			}
			rel, _ := filepath.Rel("testdata/github-webhooks", p)
			parts := strings.Split(filepath.ToSlash(rel), "/")
			event := parts[len(parts)-2]
			body, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			resp := h.post(webhookRequest{event: event, guid: newGUID(), contentType: "application/json", body: body,
				signature: func(b []byte) string { return sign(b, secret) }})
			if resp.StatusCode != 202 {
				t.Errorf("%s (%s): status %d", rel, event, resp.StatusCode)
			}
			n++
			return nil
		})
		if err != nil || n < 40 {
			t.Fatalf("walked %d payloads: %v", n, err)
		}
	})
}

// TestConcurrentDuplicateDeliveries: GitHub (or a person) sending the
// same delivery many times at once stores it once.
func TestConcurrentDuplicateDeliveries(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		h := newHarness(t, open(t))
		body, _ := os.ReadFile("testdata/github-webhooks/pull_request/opened.payload.json")
		guid := newGUID()
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := h.post(webhookRequest{event: "pull_request", guid: guid, contentType: "application/json", body: body,
					signature: func(b []byte) string { return sign(b, secret) }})
				if resp.StatusCode != 202 {
					t.Errorf("status %d", resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		st, err := h.store.DeliveryStats(t.Context())
		if err != nil || st.Pending != 1 {
			t.Errorf("stats = %+v, %v; want one pending delivery", st, err)
		}
		if d, err := h.store.Delivery(t.Context(), guid); err != nil || d.Status != inbox.Pending || d.Key == "" {
			t.Errorf("delivery = %+v, %v", d, err)
		}
	})
}

// TestWebhookWithoutItsDatabase: a delivery that cannot be stored is not
// acknowledged: 503 with Retry-After, so GitHub records it as failed and
// it is redelivered.
func TestWebhookWithoutItsDatabase(t *testing.T) {
	stores(t, func(t *testing.T, open func(t *testing.T) bot.Store) {
		store := open(t)
		h := newHarness(t, store)
		store.Close()
		body, _ := os.ReadFile("testdata/github-webhooks/pull_request/opened.payload.json")
		resp := h.post(webhookRequest{event: "pull_request", guid: newGUID(), contentType: "application/json", body: body,
			signature: func(b []byte) string { return sign(b, secret) }})
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Errorf("status %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	})
}
