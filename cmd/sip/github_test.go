package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/sipregistry/sip/bot"
	"github.com/sipregistry/sip/bot/githubtest"
	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/evaluations"
	"github.com/sipregistry/sip/registry/siptest"
	"github.com/sipregistry/sip/registry/sqlite"
)

func TestServeGitHubAppConfig(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "key.pem")
	os.WriteFile(keyFile, []byte("not a key"), 0o600)
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"no secret", map[string]string{"SIP_GITHUB_APP_ID": "1", "SIP_GITHUB_PRIVATE_KEY_FILE": keyFile}, "without SIP_GITHUB_WEBHOOK_SECRET"},
		{"secret without app id", map[string]string{"SIP_GITHUB_WEBHOOK_SECRET": "s"}, "SIP_GITHUB_APP_ID is not set"},
		{"bad app id", map[string]string{"SIP_GITHUB_APP_ID": "x", "SIP_GITHUB_WEBHOOK_SECRET": "s"}, "numeric id"},
		{"no key", map[string]string{"SIP_GITHUB_APP_ID": "1", "SIP_GITHUB_WEBHOOK_SECRET": "s"}, "private key"},
		{"missing key file", map[string]string{"SIP_GITHUB_APP_ID": "1", "SIP_GITHUB_WEBHOOK_SECRET": "s", "SIP_GITHUB_PRIVATE_KEY_FILE": "/no/such"}, "SIP_GITHUB_PRIVATE_KEY_FILE"},
		{"not a key", map[string]string{"SIP_GITHUB_APP_ID": "1", "SIP_GITHUB_WEBHOOK_SECRET": "s", "SIP_GITHUB_PRIVATE_KEY_FILE": keyFile}, "private key"},
		{"bad repository", map[string]string{"SIP_GITHUB_APP_ID": "1", "SIP_GITHUB_WEBHOOK_SECRET": "s", "SIP_GITHUB_PRIVATE_KEY": "x",
			"SIP_GITHUB_REPOSITORY": "just-a-name"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			env := env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return tc.env[k] }}
			code := run(context.Background(), env, []string{"serve", "--db", filepath.Join(t.TempDir(), "r.db"), "--addr", "127.0.0.1:0"})
			if code != exitConfig || !strings.Contains(errOut.String(), tc.want) {
				t.Errorf("got exit %d, stderr %q; want %d mentioning %q", code, errOut.String(), exitConfig, tc.want)
			}
		})
	}
}

// TestServeGitHubAppSurvivesSIGKILL: deliveries acknowledged while GitHub
// fails are in the database when `sip serve` is killed; after a restart
// each is processed, and each pull request gets one check run.
func TestServeGitHubAppSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	gh := githubtest.New(t)
	files := bundledRepo()
	repo := gh.CreateRepo("octo-org", "sips", files)
	var pulls []*githubtest.Pull
	for i, n := range []int{9, 10, 11} {
		sip := siptest.SIP(n, fmt.Sprintf("identity-%d", n), "draft")
		branch := fmt.Sprintf("add-%d", i)
		gh.Push(repo, branch, map[string]string{sip.Path: string(sip.Content)})
		pulls = append(pulls, gh.OpenPull(repo, branch, "author"))
	}
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "app.pem")
	os.WriteFile(keyFile, gh.PrivateKey, 0o600)
	db := filepath.Join(dir, "registry.db")
	start := func() (*exec.Cmd, string) {
		cmd := exec.Command(sipBinary(t), "serve", "--db", db, "--addr", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "SIP_GITHUB_APP_ID="+fmt.Sprint(gh.AppID), "SIP_GITHUB_PRIVATE_KEY_FILE="+keyFile,
			"SIP_GITHUB_WEBHOOK_SECRET=s3cret", "SIP_GITHUB_API_URL="+gh.URL, "SIP_GITHUB_REPOSITORY=octo-org/sips")
		stdout, _ := cmd.StdoutPipe()
		cmd.Stderr = io.Discard
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		line, err := bufio.NewReader(stdout).ReadString('\n')
		if err != nil {
			t.Fatalf("sip serve printed no address: %v", err)
		}
		go io.Copy(io.Discard, stdout)
		url := strings.Fields(strings.TrimPrefix(line, "sip is serving at "))[0]
		return cmd, url
	}

	gh.Fail(-1, 503, nil, nil) // GitHub is down: nothing can be processed
	cmd, url := start()
	var guids []string
	for _, p := range pulls {
		payload := map[string]any{"action": "opened", "number": p.Number, "pull_request": gh.PullJSON(repo, p),
			"repository": gh.RepoJSON(repo), "installation": map[string]any{"id": repo.Installation}, "sender": map[string]any{"login": "author"}}
		body, _ := json.Marshal(payload)
		guid := fmt.Sprintf("guid-%d", p.Number)
		guids = append(guids, guid)
		req, _ := http.NewRequest("POST", url+"/webhooks/github", bytes.NewReader(body))
		mac := hmac.New(sha256.New, []byte("s3cret"))
		mac.Write(body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", guid)
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("delivery %s: status %d", guid, resp.StatusCode)
		}
	}
	time.Sleep(300 * time.Millisecond) // let the first attempts fail
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()

	gh.Heal()
	start()
	st, err := sqlite.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	deadline := time.Now().Add(60 * time.Second)
	for _, guid := range guids {
		for {
			d, err := st.Delivery(context.Background(), guid)
			if err == nil && d.Status == inbox.Done {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery %s not processed after the restart: %+v, %v", guid, d, err)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	for _, p := range pulls {
		if runs := gh.CheckRuns(gh.HeadSHA(p), bot.ValidationCheck); len(runs) != 1 || runs[0].Conclusion != "success" {
			t.Errorf("pull request #%d: validation runs %+v, want exactly one success", p.Number, runs)
		}
		if cs := gh.Comments(repo, p.Number); len(cs) != 1 {
			t.Errorf("pull request #%d: %d comments, want 1", p.Number, len(cs))
		}
	}
}

func TestCommitURL(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{"SIP_GITHUB_REPOSITORY": "octo/sips"}, "https://github.com/octo/sips/commit/{sha}"},
		{map[string]string{"SIP_GITHUB_REPOSITORY": "octo/sips", "SIP_GITHUB_API_URL": "https://ghes.example/api/v3"}, "https://ghes.example/octo/sips/commit/{sha}"},
		{map[string]string{"SIP_GITHUB_REPOSITORY": "octo/sips", "SIP_COMMIT_URL": "https://git.example/c/{sha}"}, "https://git.example/c/{sha}"},
	} {
		t.Run(fmt.Sprint(tc.env), func(t *testing.T) {
			if got := commitURL(env{getenv: func(k string) string { return tc.env[k] }}); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestServeSignInConfig: signing people in is refused at start without
// its secret, its session key (tokens are only stored encrypted) or the
// repository; a bad key is refused without being repeated.
func TestServeSignInConfig(t *testing.T) {
	t.Parallel()
	good := "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=" // 32 bytes in base64
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"secret without client id", map[string]string{"SIP_GITHUB_CLIENT_SECRET": "s"}, "without SIP_GITHUB_CLIENT_ID"},
		{"no secret", map[string]string{"SIP_GITHUB_CLIENT_ID": "Iv1.x", "SIP_SESSION_KEY": good, "SIP_GITHUB_REPOSITORY": "o/r"}, "without SIP_GITHUB_CLIENT_SECRET"},
		{"no session key", map[string]string{"SIP_GITHUB_CLIENT_ID": "Iv1.x", "SIP_GITHUB_CLIENT_SECRET": "s", "SIP_GITHUB_REPOSITORY": "o/r"}, "refusing to sign people in without SIP_SESSION_KEY"},
		{"a short key", map[string]string{"SIP_GITHUB_CLIENT_ID": "Iv1.x", "SIP_GITHUB_CLIENT_SECRET": "s", "SIP_SESSION_KEY": "hunter2-secret", "SIP_GITHUB_REPOSITORY": "o/r"}, "32 random bytes"},
		{"no repository", map[string]string{"SIP_GITHUB_CLIENT_ID": "Iv1.x", "SIP_GITHUB_CLIENT_SECRET": "s", "SIP_SESSION_KEY": good}, "without SIP_GITHUB_REPOSITORY"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			env := env{stdout: &out, stderr: &errOut, getenv: func(k string) string { return tc.env[k] }}
			code := run(context.Background(), env, []string{"serve", "--db", filepath.Join(t.TempDir(), "r.db"), "--addr", "127.0.0.1:0"})
			if code != exitConfig || !strings.Contains(errOut.String(), tc.want) || strings.Contains(errOut.String(), "hunter2") {
				t.Errorf("got exit %d, stderr %q; want %d mentioning %q", code, errOut.String(), exitConfig, tc.want)
			}
		})
	}
}

// bundledRepo is a SIP repository's files for the fake GitHub: the bundled
// SIPs under evaluations/ and a policy whose maintainer is "maintainer".
func bundledRepo() map[string]string {
	files := map[string]string{".github/sip.yml": "maintainers:\n  users: [maintainer]\n"}
	fs.WalkDir(evaluations.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(p, "SIP-") {
			b, _ := fs.ReadFile(evaluations.FS, p)
			files["evaluations/"+p] = string(b)
		}
		return err
	})
	return files
}
