package credential

import (
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the CPU time the process used so far: on a loaded machine
// it varies far less than wall time.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time per operation since start.
func reportCPU(b *testing.B, start time.Duration) {
	b.ReportMetric(float64((cpuTime(b)-start).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// passes numbers the passes the benchmarks issue, so none is issued twice.
var passes atomic.Int64

// TestCanonicalMatchesFullProcessing: canonicalising from the contexts
// processed once gives exactly what json-gold gives processing them in
// the document.
func TestCanonicalMatchesFullProcessing(t *testing.T) {
	i := testIssuer(t, 1)
	bare := testPass()
	bare.Score, bare.MaxScore, bare.PassingScore, bare.ExpiresAt = nil, nil, nil, time.Time{}
	withStatus := testPass()
	withStatus.Status = Entry(func(n int64) string {
		return fmt.Sprintf("https://registry.example:8443/api/v1/credentials/status/%d", n)
	}, 7)
	signed, err := i.Issue(testPass())
	if err != nil {
		t.Fatal(err)
	}
	proof := signed["proof"].(map[string]any)
	config := map[string]any{"@context": signed["@context"]}
	for k, v := range proof {
		if k != "proofValue" {
			config[k] = v
		}
	}
	docs := map[string]map[string]any{
		"badge with score and expiry": i.Badge(testPass()),
		"badge without score":         i.Badge(bare),
		"badge with status":           i.Badge(withStatus),
		"proof options":               config,
		"DID document":                i.DIDDocument(),
		"attestation":                 unsigned(t, must(i.Attest("https://registry.example:8443/agents/ada", "https://b.example/agents/ada", "did:web:b.example", passedAt))),
		"undefined property":          {"@context": []any{ContextVC, ContextOB}, "id": "urn:x", "type": []any{"VerifiableCredential"}, "notInAnyContext": "dropped"},
		"one context as a string":     {"@context": ContextVC, "id": "urn:x", "type": "VerifiableCredential", "issuer": "did:web:x", "credentialSubject": map[string]any{"id": "urn:y"}},
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			want, err := canonicalFull(doc)
			if err != nil {
				t.Fatal(err)
			}
			for range 2 { // the second from the kept context
				got, err := canonical(doc)
				if err != nil {
					t.Fatal(err)
				}
				if got != want {
					t.Errorf("canonical =\n%s\nwant\n%s", got, want)
				}
			}
		})
	}
}

// unsigned is a signed document without its proof.
func unsigned(t *testing.T, doc map[string]any) map[string]any {
	t.Helper()
	out := map[string]any{}
	for k, v := range doc {
		if k != "proof" {
			out[k] = v
		}
	}
	return out
}

// TestCanonicalRefusesUnknownContexts: a context that is not embedded
// takes the whole path, which refuses it, and nothing is kept for it.
func TestCanonicalRefusesUnknownContexts(t *testing.T) {
	for name, ctx := range map[string]any{
		"unknown URL":        []any{ContextVC, "https://evil.example/context.json"},
		"inline context":     []any{ContextVC, map[string]any{"x": "https://evil.example/x"}},
		"unknown URL string": "https://evil.example/context.json",
	} {
		t.Run(name, func(t *testing.T) {
			doc := map[string]any{"@context": ctx, "id": "urn:x", "type": "VerifiableCredential"}
			if _, ok, err := processedContext(ctx); ok || err != nil {
				t.Errorf("processedContext = %v, %v; want not kept, no error", ok, err)
			}
			if name != "inline context" {
				if _, err := canonical(doc); err == nil {
					t.Error("canonicalised a document with an unknown context")
				}
			}
		})
	}
}

// TestCanonicalConcurrent: the shared active context is only read (run
// with -race).
func TestCanonicalConcurrent(t *testing.T) {
	i := testIssuer(t, 1)
	want, err := canonicalFull(i.Badge(testPass()))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			got, err := canonical(i.Badge(testPass()))
			if err == nil && got != want {
				err = fmt.Errorf("got %q", got)
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

// TestIssueKept: issuing a pass again gives the same bytes from the kept
// credential, which a caller's changes do not reach; a changed pass or
// another key is signed anew.
func TestIssueKept(t *testing.T) {
	i := testIssuer(t, 1)
	p := testPass()
	p.CredentialURL += "/kept"
	first, err := i.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(first)
	first["name"] = "changed by the caller"
	first["credentialSubject"].(map[string]any)["id"] = "changed"
	again, err := i.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(again); string(got) != string(want) {
		t.Errorf("issued again:\n%s\nwant\n%s", got, want)
	}
	if r := Verify(want, i, nil, passedAt); !r.Verified {
		t.Errorf("the kept credential does not verify: %+v", r.Checks)
	}

	renamed := p
	renamed.Agent = "grace"
	other, err := i.Issue(renamed)
	if err != nil {
		t.Fatal(err)
	}
	if other["proof"].(map[string]any)["proofValue"] == again["proof"].(map[string]any)["proofValue"] {
		t.Error("a changed pass got the kept signature")
	}
	rotated := testIssuer(t, 1, 2)
	r, err := rotated.Issue(p)
	if err != nil {
		t.Fatal(err)
	}
	if vm := r["proof"].(map[string]any)["verificationMethod"]; vm != rotated.Signer().VerificationMethod {
		t.Errorf("after a rotation the proof's verification method is %v, want %s", vm, rotated.Signer().VerificationMethod)
	}
}

// BenchmarkIssueFirst issues a credential never issued before (a new
// pass each time), reporting the median.
func BenchmarkIssueFirst(b *testing.B) {
	i := testIssuer(b, 1)
	var times []time.Duration
	cpu := cpuTime(b)
	for b.Loop() {
		p := testPass()
		p.CredentialURL = fmt.Sprintf("%s/%d", p.CredentialURL, passes.Add(1))
		start := time.Now()
		if _, err := i.Issue(p); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
	}
	reportCPU(b, cpu)
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "p50-ns")
}

// BenchmarkIssueAgain issues a credential issued before (the download of
// a result's credential after the first).
func BenchmarkIssueAgain(b *testing.B) {
	i := testIssuer(b, 1)
	if _, err := i.Issue(testPass()); err != nil {
		b.Fatal(err)
	}
	defer reportCPU(b, cpuTime(b))
	for b.Loop() {
		if _, err := i.Issue(testPass()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonicalFull canonicalises a badge processing its contexts
// each time, as before they were kept.
func BenchmarkCanonicalFull(b *testing.B) {
	doc := testIssuer(b, 1).Badge(testPass())
	defer reportCPU(b, cpuTime(b))
	for b.Loop() {
		if _, err := canonicalFull(doc); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCanonical canonicalises a badge from the kept contexts.
func BenchmarkCanonical(b *testing.B) {
	doc := testIssuer(b, 1).Badge(testPass())
	defer reportCPU(b, cpuTime(b))
	for b.Loop() {
		if _, err := canonical(doc); err != nil {
			b.Fatal(err)
		}
	}
}
