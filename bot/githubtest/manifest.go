package githubtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
)

// The App manifest flow (docs.github.com: "Registering a GitHub App from
// a manifest"): the browser POSTs a form with the manifest to
// /settings/apps/new (or /organizations/{org}/settings/apps/new), the user
// confirms, and GitHub redirects to the manifest's redirect_url with a
// one-use code and the state; the code is exchanged for the App's id,
// private key and webhook secret at POST /app-manifests/{code}/conversions.
// The fake confirms at once and creates the fake's own App, so the
// credentials it hands out work against it.

// manifestApp is what a code converts into.
type manifestApp struct {
	Manifest      map[string]any
	Org           string
	WebhookSecret string
}

// ManifestWebhookSecret is the webhook secret the fake's App gets from
// the manifest flow.
const ManifestWebhookSecret = "whsec-from-the-manifest-flow"

func (f *Fake) manifestRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /settings/apps/new", func(w http.ResponseWriter, r *http.Request) { f.newAppFromManifest(w, r, "") })
	mux.HandleFunc("POST /organizations/{org}/settings/apps/new", func(w http.ResponseWriter, r *http.Request) {
		f.newAppFromManifest(w, r, r.PathValue("org"))
	})
	mux.HandleFunc("POST /app-manifests/{code}/conversions", f.convertManifest)
}

func (f *Fake) newAppFromManifest(w http.ResponseWriter, r *http.Request, org string) {
	var m map[string]any
	if err := json.Unmarshal([]byte(r.PostFormValue("manifest")), &m); err != nil {
		http.Error(w, "Invalid manifest: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	hook, _ := m["hook_attributes"].(map[string]any)
	redirect, _ := m["redirect_url"].(string)
	target, err := url.Parse(redirect)
	if hook == nil || hook["url"] == nil || err != nil || target.Scheme == "" {
		http.Error(w, "The manifest needs hook_attributes.url and an absolute redirect_url", http.StatusUnprocessableEntity)
		return
	}
	b := make([]byte, 10)
	rand.Read(b)
	code := hex.EncodeToString(b)
	f.mu.Lock()
	if f.manifests == nil {
		f.manifests = map[string]manifestApp{}
	}
	f.manifests[code] = manifestApp{Manifest: m, Org: org, WebhookSecret: ManifestWebhookSecret}
	f.mu.Unlock()
	q := target.Query()
	q.Set("code", code)
	if st := r.URL.Query().Get("state"); st != "" {
		q.Set("state", st)
	}
	target.RawQuery = q.Encode()
	http.Redirect(w, r, target.String(), http.StatusFound)
}

func (f *Fake) convertManifest(w http.ResponseWriter, r *http.Request) {
	code := r.PathValue("code")
	f.mu.Lock()
	app, ok := f.manifests[code]
	delete(f.manifests, code) // a code converts once
	f.mu.Unlock()
	if !ok {
		writeJSON(w, http.StatusNotFound, map[string]string{"message": "Not Found"})
		return
	}
	name, _ := app.Manifest["name"].(string)
	owner := app.Org
	if owner == "" {
		owner = "octocat"
	}
	writeJSON(w, http.StatusCreated, map[string]any{
		"id": f.AppID, "slug": f.AppSlug, "name": name, "node_id": "A_fake",
		"owner":     map[string]any{"login": owner},
		"html_url":  f.URL + "/apps/" + f.AppSlug,
		"client_id": "Iv1.fake", "client_secret": "client-secret",
		"webhook_secret": app.WebhookSecret, "pem": string(f.PrivateKey),
	})
}

// ManifestCodes is how many manifest codes wait to be converted.
func (f *Fake) ManifestCodes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.manifests)
}
