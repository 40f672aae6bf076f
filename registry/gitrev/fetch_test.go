package gitrev_test

import (
	"errors"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/gitrev"
	"github.com/sipregistry/sip/registry/siptest"
)

func sipRepo(t *testing.T) (dir, first, second string) {
	t.Helper()
	dir = siptest.NewRepo(t, map[string]string{
		"evaluations/SIP-1.md":   string(siptest.SIP(1, "alpha", "active").Content),
		"evaluations/README.md":  "index",
		"evaluations/x/SIP-2.md": string(siptest.SIP(2, "beta", "active").Content),
		"docs/not-a-sip.md":      "no",
	})
	first = siptest.Git(t, dir, "rev-parse", "HEAD")
	second = siptest.Commit(t, dir, "second", map[string]string{"evaluations/SIP-3.md": string(siptest.SIP(3, "gamma", "active").Content)})
	siptest.Git(t, dir, "tag", "v1", first)
	return dir, first, second
}

func TestFetchLocal(t *testing.T) {
	t.Parallel()
	dir, first, second := sipRepo(t)
	for _, tt := range []struct {
		ref, commit string
		want        []string
	}{
		{"", second, []string{"evaluations/SIP-1.md", "evaluations/SIP-3.md", "evaluations/x/SIP-2.md"}},
		{"main", second, nil},
		{first, first, []string{"evaluations/SIP-1.md", "evaluations/x/SIP-2.md"}},
		{"v1", first, nil},
		{first[:10], first, nil},
	} {
		t.Run("ref "+tt.ref, func(t *testing.T) {
			src, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: dir, Ref: tt.ref})
			if err != nil {
				t.Fatal(err)
			}
			if src.Commit != tt.commit || !strings.Contains(src.Name, dir) {
				t.Errorf("got commit %s name %s, want commit %s and a name with %s", src.Commit, src.Name, tt.commit, dir)
			}
			if tt.want != nil && !slices.Equal(paths(load(t, src)), tt.want) {
				t.Errorf("got files %v, want %v", paths(load(t, src)), tt.want)
			}
		})
	}
	if _, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: dir, Ref: "nope"}); !errors.Is(err, gitrev.ErrUnknownRevision) {
		t.Errorf("unknown ref: %v", err)
	}
	src, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: dir, Dir: "missing"})
	if err != nil || len(load(t, src)) != 0 {
		t.Errorf("missing folder: %v", err)
	}
	// A bare clone is read in place too.
	bare := filepath.Join(t.TempDir(), "bare.git")
	siptest.Git(t, dir, "clone", "-q", "--bare", dir, bare)
	if src, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: bare}); err != nil || src.Commit != second {
		t.Errorf("bare: %v, %v", src.Commit, err)
	}
}

// gitServer serves the repositories under root over smart HTTP with the
// real git http-backend, requiring the token when one is given.
func gitServer(t *testing.T, root, token string) *httptest.Server {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := &cgi.Handler{
		Path: filepath.Join(strings.TrimSpace(string(out)), "git-http-backend"),
		Env:  []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null"},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			if u, p, ok := r.BasicAuth(); !ok || u != "x-access-token" || p != token {
				w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
				http.Error(w, "unauthorized", http.StatusUnauthorized)
				return
			}
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetchOverHTTP(t *testing.T) {
	t.Parallel()
	dir, first, second := sipRepo(t)
	root := t.TempDir()
	siptest.Git(t, dir, "clone", "-q", "--bare", dir, filepath.Join(root, "sips.git"))
	siptest.Git(t, filepath.Join(root, "sips.git"), "config", "uploadpack.allowReachableSHA1InWant", "true")
	const token = "ghs_secret_token_value"
	srv := gitServer(t, root, token)
	url := srv.URL + "/sips.git"

	for _, ref := range []string{"", "main", "v1", first} {
		src, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: url, Ref: ref, Token: token})
		if err != nil {
			t.Fatalf("ref %q: %v", ref, err)
		}
		want := second
		if ref == "v1" || ref == first {
			want = first
		}
		if files := load(t, src); src.Commit != want || len(files) == 0 {
			t.Errorf("ref %q: commit %s, %d files", ref, src.Commit, len(files))
		}
		if strings.Contains(src.Name, token) {
			t.Errorf("token in source name %q", src.Name)
		}
	}
	_, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: url, Token: "wrong"})
	if !errors.Is(err, gitrev.ErrRepository) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("bad token: %v", err)
	}
	// A commit named by its SHA is found without listing refs; the bad
	// token shows when the objects are fetched.
	src, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: url, Ref: first, Token: "wrong"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := src.Load(t.Context()); !errors.Is(err, gitrev.ErrRepository) || strings.Contains(err.Error(), "wrong") {
		t.Errorf("bad token: %v", err)
	}
	if _, err := gitrev.Fetch(t.Context(), gitrev.FetchOptions{Repo: url, Ref: "nope", Token: token}); !errors.Is(err, gitrev.ErrUnknownRevision) {
		t.Errorf("unknown ref: %v", err)
	}
}

func load(t *testing.T, src registry.Source) []registry.File {
	t.Helper()
	files, err := src.Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return files
}
