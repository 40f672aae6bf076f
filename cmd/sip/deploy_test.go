package main

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// sipSettings are the SIP_* variables sip reads, found in its source, so
// that a recipe naming another one (a typo, a setting that went away)
// fails here.
func sipSettings(t *testing.T) map[string]bool {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`getenv\("(SIP_[A-Z0-9_]+)"\)`)
	out := map[string]bool{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(b), -1) {
			out[m[1]] = true
		}
	}
	if !out["SIP_BASE_URL"] || !out["SIP_DATABASE_URL"] {
		t.Fatalf("the settings sip reads were not found: %v", out)
	}
	return out
}

// TestKubernetesRecipe: the manifests of docs/deploy/kubernetes run two
// or more replicas on PostgreSQL, probe /healthz and /readyz, set only
// settings sip reads, take the keys from the Secret, and mount them where
// the *_FILE settings say.
func TestKubernetesRecipe(t *testing.T) {
	t.Parallel()
	known := sipSettings(t)
	type envVar struct {
		Name      string
		Value     string
		ValueFrom *struct {
			SecretKeyRef struct{ Name, Key string } `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	}
	type probe struct {
		HTTPGet struct {
			Path string
			Port any
		} `yaml:"httpGet"`
	}
	var deploy struct {
		Kind string
		Spec struct {
			Replicas int
			Template struct {
				Spec struct {
					Containers []struct {
						Args         []string
						Env          []envVar
						VolumeMounts []struct {
							Name      string
							MountPath string `yaml:"mountPath"`
						} `yaml:"volumeMounts"`
						LivenessProbe  probe `yaml:"livenessProbe"`
						ReadinessProbe probe `yaml:"readinessProbe"`
					}
					Volumes []struct {
						Name   string
						Secret struct {
							SecretName string `yaml:"secretName"`
							Items      []struct{ Key, Path string }
						}
					}
				}
			}
		}
	}
	raw, err := os.ReadFile("../../docs/deploy/kubernetes/sip.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	kinds := map[string]bool{}
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		var head struct{ Kind string }
		if err := doc.Decode(&head); err != nil {
			t.Fatal(err)
		}
		kinds[head.Kind] = true
		if head.Kind == "Deployment" {
			if err := doc.Decode(&deploy); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range []string{"Deployment", "Service", "PodDisruptionBudget"} {
		if !kinds[k] {
			t.Errorf("no %s in sip.yaml", k)
		}
	}
	var secret struct {
		StringData map[string]string `yaml:"stringData"`
	}
	raw, err = os.ReadFile("../../docs/deploy/kubernetes/secret.example.yaml")
	if err != nil || yaml.Unmarshal(raw, &secret) != nil {
		t.Fatalf("secret.example.yaml: %v", err)
	}
	if deploy.Spec.Replicas < 2 || len(deploy.Spec.Template.Spec.Containers) != 1 {
		t.Fatalf("deployment: %+v", deploy.Spec)
	}
	c := deploy.Spec.Template.Spec.Containers[0]
	if c.LivenessProbe.HTTPGet.Path != "/healthz" || c.ReadinessProbe.HTTPGet.Path != "/readyz" || len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Errorf("container: args %v, liveness %q, readiness %q", c.Args, c.LivenessProbe.HTTPGet.Path, c.ReadinessProbe.HTTPGet.Path)
	}
	mounted := map[string]bool{}
	for _, v := range deploy.Spec.Template.Spec.Volumes {
		for _, m := range c.VolumeMounts {
			if m.Name != v.Name {
				continue
			}
			for _, it := range v.Secret.Items {
				mounted[m.MountPath+"/"+it.Path] = true
				if _, ok := secret.StringData[it.Key]; !ok {
					t.Errorf("volume item %q is not a key of the Secret", it.Key)
				}
			}
		}
	}
	env := map[string]envVar{}
	for _, v := range c.Env {
		env[v.Name] = v
		if !known[v.Name] {
			t.Errorf("env %s: sip reads no such setting", v.Name)
		}
		if v.ValueFrom != nil {
			if _, ok := secret.StringData[v.ValueFrom.SecretKeyRef.Key]; !ok {
				t.Errorf("env %s: the Secret has no key %q", v.Name, v.ValueFrom.SecretKeyRef.Key)
			}
		}
		if strings.HasSuffix(v.Name, "_FILE") && !mounted[v.Value] {
			t.Errorf("env %s=%s: no Secret item is mounted there (mounted: %v)", v.Name, v.Value, mounted)
		}
	}
	for _, name := range []string{"SIP_BASE_URL", "SIP_DATABASE_URL", "SIP_SEALING_KEY_FILE", "SIP_ISSUER_KEY_FILE", "SIP_GITHUB_PRIVATE_KEY_FILE", "SIP_GITHUB_WEBHOOK_SECRET"} {
		if _, ok := env[name]; !ok {
			t.Errorf("the deployment does not set %s", name)
		}
	}
	if !strings.HasPrefix(secret.StringData["database-url"], "postgres://") {
		t.Errorf("the replicas do not share PostgreSQL: database-url %q", secret.StringData["database-url"])
	}
	if err := checkBaseURL(env["SIP_ADDR"].Value, env["SIP_BASE_URL"].Value); err != nil {
		t.Errorf("sip serve would refuse the deployment's settings: %v", err)
	}
}

// TestSystemdRecipe: the unit runs sip serve with settings sip reads, does
// not restart on a configuration error, and keeps the database private.
func TestSystemdRecipe(t *testing.T) {
	t.Parallel()
	known := sipSettings(t)
	f, err := os.Open("../../docs/deploy/sip.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	keys := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Errorf("not a key=value line: %q", line)
			continue
		}
		keys[k] = append(keys[k], v)
	}
	for _, v := range keys["Environment"] {
		name, _, _ := strings.Cut(v, "=")
		if !known[name] {
			t.Errorf("Environment=%s: sip reads no such setting", v)
		}
	}
	for k, want := range map[string]string{"ExecStart": "/usr/local/bin/sip serve", "UMask": "0077", "StateDirectoryMode": "0700", "User": "sip"} {
		if got := strings.Join(keys[k], " "); !strings.HasPrefix(got, want) {
			t.Errorf("%s=%q, want %q", k, got, want)
		}
	}
	if !strings.Contains(strings.Join(keys["RestartPreventExitStatus"], " "), "78") {
		t.Errorf("RestartPreventExitStatus=%v: a configuration error (78) would restart forever", keys["RestartPreventExitStatus"])
	}
}
