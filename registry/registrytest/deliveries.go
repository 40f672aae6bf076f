package registrytest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/bot/inbox"
	"github.com/sipregistry/sip/registry"
)

// RunDeliveryStoreTests runs the GitHub App's inbox half of the
// conformance suite.
func RunDeliveryStoreTests(t *testing.T, open func(t *testing.T) inbox.Store) {
	for _, tc := range []struct {
		name string
		fn   func(*testing.T, inbox.Store)
	}{
		{"EnqueueOnce", testDeliveryEnqueueOnce},
		{"DeadIsRequeued", testDeliveryDeadRequeued},
		{"ClaimRetryComplete", testDeliveryLifecycle},
		{"ExpiredLeaseIsTakenAgain", testDeliveryLeaseExpiry},
		{"OneKeyAtATime", testDeliveryKeySerialised},
		{"ConcurrentClaimsTakeEachOnce", testDeliveryConcurrentClaims},
		{"ConcurrentEnqueueOfOneID", testDeliveryConcurrentEnqueue},
		{"StatsAndPrune", testDeliveryStatsPrune},
		{"Repositories", testRepositories},
		{"Verification", testVerification},
		{"Overrides", testOverrides},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.fn(t, open(t))
		})
	}
}

func delivery(id, key string, at time.Time) *inbox.Delivery {
	return &inbox.Delivery{ID: id, Event: "pull_request", Action: "opened", Key: key, Payload: []byte(`{"n":1}`), ReceivedAt: at}
}

func enqueue(t *testing.T, s inbox.Store, d *inbox.Delivery) (inbox.Status, bool) {
	t.Helper()
	st, fresh, err := s.EnqueueDelivery(t.Context(), d)
	if err != nil {
		t.Fatalf("EnqueueDelivery %s: %v", d.ID, err)
	}
	return st, fresh
}

func claim(t *testing.T, s inbox.Store, now time.Time) *inbox.Delivery {
	t.Helper()
	d, err := s.ClaimDelivery(t.Context(), now, now.Add(time.Minute))
	if errors.Is(err, registry.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatalf("ClaimDelivery: %v", err)
	}
	return d
}

func testDeliveryEnqueueOnce(t *testing.T, s inbox.Store) {
	if st, fresh := enqueue(t, s, delivery("d1", "", t0)); st != inbox.Pending || !fresh {
		t.Fatalf("first enqueue = %s, %v", st, fresh)
	}
	if st, fresh := enqueue(t, s, delivery("d1", "", t0)); st != inbox.Pending || fresh {
		t.Fatalf("second enqueue while pending = %s, %v; want pending, not fresh", st, fresh)
	}
	d := claim(t, s, t0)
	if d == nil || d.ID != "d1" || d.Attempts != 1 || string(d.Payload) != `{"n":1}` || d.Event != "pull_request" || d.Action != "opened" {
		t.Fatalf("claimed %+v", d)
	}
	if err := s.CompleteDelivery(t.Context(), "d1", t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if st, fresh := enqueue(t, s, delivery("d1", "", t0.Add(time.Hour))); st != inbox.Done || fresh {
		t.Fatalf("enqueue of a done delivery = %s, %v; want done, not fresh", st, fresh)
	}
	if d := claim(t, s, t0.Add(2*time.Hour)); d != nil {
		t.Fatalf("a done delivery was claimed again: %+v", d)
	}
}

func testDeliveryDeadRequeued(t *testing.T, s inbox.Store) {
	enqueue(t, s, delivery("d1", "", t0))
	claim(t, s, t0)
	if err := s.KillDelivery(t.Context(), "d1", "permanent", t0); err != nil {
		t.Fatal(err)
	}
	if d := claim(t, s, t0.Add(time.Hour)); d != nil {
		t.Fatalf("a dead delivery was claimed: %+v", d)
	}
	if st, fresh := enqueue(t, s, delivery("d1", "", t0.Add(time.Hour))); st != inbox.Pending || !fresh {
		t.Fatalf("redelivery of a dead delivery = %s, %v; want pending, fresh", st, fresh)
	}
	d := claim(t, s, t0.Add(time.Hour))
	if d == nil || d.Attempts != 1 {
		t.Fatalf("requeued delivery claimed as %+v; want attempts reset to 1", d)
	}
}

func testDeliveryLifecycle(t *testing.T, s inbox.Store) {
	ctx := t.Context()
	enqueue(t, s, delivery("d1", "", t0))
	claim(t, s, t0)
	if err := s.RetryDelivery(ctx, "d1", t0.Add(time.Minute), "GitHub answered 502"); err != nil {
		t.Fatal(err)
	}
	if d := claim(t, s, t0.Add(30*time.Second)); d != nil {
		t.Fatalf("claimed before it was due: %+v", d)
	}
	d := claim(t, s, t0.Add(time.Minute))
	if d == nil || d.Attempts != 2 || d.LastError != "GitHub answered 502" {
		t.Fatalf("retried delivery = %+v", d)
	}
	for name, err := range map[string]error{
		"retry a pending":   func() error { s.RetryDelivery(ctx, "d1", t0, "x"); return s.RetryDelivery(ctx, "d1", t0, "x") }(),
		"complete unknown":  s.CompleteDelivery(ctx, "nope", t0),
		"kill not claimed ": s.KillDelivery(ctx, "nope", "x", t0),
	} {
		if !errors.Is(err, registry.ErrConflict) {
			t.Errorf("%s: err = %v, want ErrConflict", name, err)
		}
	}
	got, err := s.Delivery(ctx, "d1")
	if err != nil || got.Status != inbox.Pending {
		t.Fatalf("Delivery = %+v, %v", got, err)
	}
	if _, err := s.Delivery(ctx, "nope"); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("unknown delivery: %v", err)
	}
}

func testDeliveryLeaseExpiry(t *testing.T, s inbox.Store) {
	enqueue(t, s, delivery("d1", "k", t0))
	if d := claim(t, s, t0); d == nil {
		t.Fatal("nothing claimed")
	}
	// The worker died: nothing is due until the lease runs out.
	if d := claim(t, s, t0.Add(30*time.Second)); d != nil {
		t.Fatalf("claimed under a live lease: %+v", d)
	}
	d := claim(t, s, t0.Add(2*time.Minute))
	if d == nil || d.ID != "d1" || d.Attempts != 2 {
		t.Fatalf("after the lease ran out: %+v", d)
	}
}

func testDeliveryKeySerialised(t *testing.T, s inbox.Store) {
	enqueue(t, s, delivery("a1", "repo:1/pull:2", t0))
	enqueue(t, s, delivery("a2", "repo:1/pull:2", t0.Add(time.Millisecond)))
	enqueue(t, s, delivery("b1", "repo:1/pull:3", t0.Add(2*time.Millisecond)))
	now := t0.Add(time.Second)
	first, second := claim(t, s, now), claim(t, s, now)
	if first == nil || second == nil || first.ID != "a1" || second.ID != "b1" {
		t.Fatalf("claims = %v, %v; want a1 then b1 (a2 waits for a1)", first, second)
	}
	if d := claim(t, s, now); d != nil {
		t.Fatalf("a2 claimed while a1 holds its key: %+v", d)
	}
	if err := s.CompleteDelivery(t.Context(), "a1", now); err != nil {
		t.Fatal(err)
	}
	if d := claim(t, s, now); d == nil || d.ID != "a2" {
		t.Fatalf("after a1 completed: %+v", d)
	}
}

func testDeliveryConcurrentClaims(t *testing.T, s inbox.Store) {
	const n = 40
	for i := range n {
		key := fmt.Sprintf("k%d", i%10) // ten keys, four deliveries each
		enqueue(t, s, delivery(fmt.Sprintf("d%02d", i), key, t0.Add(time.Duration(i)*time.Millisecond)))
	}
	now := t0.Add(time.Second)
	var mu sync.Mutex
	seen := map[string]int{}
	holding := map[string]bool{}
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				d, err := s.ClaimDelivery(t.Context(), now, now.Add(time.Hour))
				if errors.Is(err, registry.ErrNotFound) {
					mu.Lock()
					left := len(seen) < n
					mu.Unlock()
					if !left {
						return
					}
					time.Sleep(time.Millisecond)
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				seen[d.ID]++
				if holding[d.Key] {
					t.Errorf("key %s claimed twice at once", d.Key)
				}
				holding[d.Key] = true
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				holding[d.Key] = false
				mu.Unlock()
				if err := s.CompleteDelivery(t.Context(), d.ID, now); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	for id, c := range seen {
		if c != 1 {
			t.Errorf("%s claimed %d times", id, c)
		}
	}
	if len(seen) != n {
		t.Errorf("%d deliveries claimed, want %d", len(seen), n)
	}
}

func testDeliveryConcurrentEnqueue(t *testing.T, s inbox.Store) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	fresh := 0
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, f, err := s.EnqueueDelivery(t.Context(), delivery("same", "", t0))
			if err != nil {
				t.Error(err)
				return
			}
			if f {
				mu.Lock()
				fresh++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if fresh != 1 {
		t.Errorf("%d enqueues reported a new delivery, want 1", fresh)
	}
}

func testDeliveryStatsPrune(t *testing.T, s inbox.Store) {
	ctx := t.Context()
	for i := range 4 {
		enqueue(t, s, delivery(fmt.Sprintf("d%d", i), "", t0.Add(time.Duration(i)*time.Second)))
	}
	d := claim(t, s, t0.Add(time.Minute))
	s.CompleteDelivery(ctx, d.ID, t0.Add(time.Minute))
	d = claim(t, s, t0.Add(time.Minute))
	s.KillDelivery(ctx, d.ID, "bad", t0.Add(time.Minute))
	claim(t, s, t0.Add(time.Minute))
	st, err := s.DeliveryStats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := inbox.Stats{Pending: 1, Processing: 1, Done: 1, Dead: 1, OldestPending: t0.Add(3 * time.Second)}
	if st != want {
		t.Errorf("stats = %+v, want %+v", st, want)
	}
	n, err := s.PruneDeliveries(ctx, t0.Add(time.Hour))
	if err != nil || n != 1 {
		t.Errorf("prune = %d, %v; want 1 (the done one; the dead one stays)", n, err)
	}
	if _, err := s.Delivery(ctx, "d1"); err != nil {
		t.Errorf("dead delivery pruned: %v", err)
	}
}

func testRepositories(t *testing.T, s inbox.Store) {
	ctx := t.Context()
	put := func(r inbox.Repository) {
		t.Helper()
		r.UpdatedAt = t0
		epoch, err := s.RepositoryEpoch(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.PutRepository(ctx, &r, epoch); err != nil {
			t.Fatal(err)
		}
	}
	put(inbox.Repository{ID: 2, InstallationID: 7, FullName: "octo/sips", DefaultBranch: "main", CloneURL: "https://example/octo/sips.git"})
	put(inbox.Repository{ID: 1, InstallationID: 7, FullName: "octo/another"})
	put(inbox.Repository{ID: 3, InstallationID: 8, FullName: "zed/sips", DefaultBranch: "trunk"})
	// An installation event names the repository without its branch: what
	// was known stays.
	put(inbox.Repository{ID: 2, InstallationID: 7, FullName: "octo/sips"})
	if err := s.DeactivateRepositories(ctx, 7, []int64{1}, t0); err != nil {
		t.Fatal(err)
	}
	rs, err := s.Repositories(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 || rs[0].FullName != "octo/sips" || rs[0].DefaultBranch != "main" || rs[0].CloneURL == "" || rs[1].FullName != "zed/sips" {
		t.Fatalf("repositories = %+v", rs)
	}
	if err := s.DeactivateRepositories(ctx, 8, nil, t0); err != nil {
		t.Fatal(err)
	}
	put(inbox.Repository{ID: 1, InstallationID: 7, FullName: "octo/another"}) // added back
	rs, _ = s.Repositories(ctx)
	if len(rs) != 2 || rs[0].FullName != "octo/another" || rs[1].FullName != "octo/sips" {
		t.Fatalf("after uninstalling 8 and adding 1 back: %+v", rs)
	}
	epoch, err := s.RepositoryEpoch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.PutRepository(ctx, &inbox.Repository{ID: 9, FullName: "no-slash", UpdatedAt: t0}, epoch); !errors.Is(err, registry.ErrInvalid) {
		t.Errorf("a repository name without owner: %v, want ErrInvalid", err)
	}

	// A listing read before a removal cannot bring the repository back:
	// its epoch is stale once the removal is processed.
	stale := epoch
	if err := s.DeactivateRepositories(ctx, 7, []int64{2}, t0); err != nil {
		t.Fatal(err)
	}
	if now, _ := s.RepositoryEpoch(ctx); now != stale+1 {
		t.Errorf("epoch after a removal = %d, want %d", now, stale+1)
	}
	err = s.PutRepository(ctx, &inbox.Repository{ID: 2, InstallationID: 7, FullName: "octo/sips", UpdatedAt: t0}, stale)
	if !errors.Is(err, registry.ErrConflict) {
		t.Errorf("a write under a stale epoch: %v, want ErrConflict", err)
	}
	// So is one of another installation (a repository can move between
	// installations), and a new one.
	err = s.PutRepository(ctx, &inbox.Repository{ID: 2, InstallationID: 8, FullName: "octo/sips", UpdatedAt: t0}, stale)
	if !errors.Is(err, registry.ErrConflict) {
		t.Errorf("the repository under another installation, with a stale epoch: %v, want ErrConflict", err)
	}
	rs, _ = s.Repositories(ctx)
	if len(rs) != 1 || rs[0].FullName != "octo/another" {
		t.Errorf("after a stale write: %+v, want octo/another only", rs)
	}
}

func testVerification(t *testing.T, s inbox.Store) {
	ctx := t.Context()
	if _, err := s.Verification(ctx, 1); !errors.Is(err, registry.ErrNotFound) {
		t.Errorf("verification of a repository never verified: %v, want ErrNotFound", err)
	}
	want := inbox.Verification{RepoID: 1, Refused: "abc", Missing: "1 approval from admins", Issue: 7, UpdatedAt: t0}
	if err := s.PutVerification(ctx, &want); err != nil {
		t.Fatal(err)
	}
	want.Refused, want.Missing, want.UpdatedAt = "", "", t0.Add(time.Minute)
	if err := s.PutVerification(ctx, &want); err != nil {
		t.Fatal(err)
	}
	got, err := s.Verification(ctx, 1)
	if err != nil || *got != want {
		t.Errorf("verification = %+v, %v; want %+v", got, err, want)
	}
}

func testOverrides(t *testing.T, s inbox.Store) {
	ctx := t.Context()
	o := inbox.Override{CommentID: 11, RepoID: 1, Subject: "commit:abc", By: "ada", Reason: "hotfix reviewed on a call", At: t0}
	if fresh, err := s.AddOverride(ctx, &o); err != nil || !fresh {
		t.Fatalf("first override: %v, %v", fresh, err)
	}
	replay := o
	replay.Reason, replay.At = "edited later", t0.Add(time.Hour)
	if fresh, err := s.AddOverride(ctx, &replay); err != nil || fresh {
		t.Errorf("the same comment again: fresh = %v, %v; want false", fresh, err)
	}
	other := inbox.Override{CommentID: 12, RepoID: 1, Subject: "pull:3@def", By: "ada", Reason: "x", At: t0}
	if _, err := s.AddOverride(ctx, &other); err != nil {
		t.Fatal(err)
	}
	got, err := s.Overrides(ctx, 1, "commit:abc")
	if err != nil || len(got) != 1 || *got[0] != o {
		t.Errorf("overrides = %+v, %v; want the first only, as recorded", got, err)
	}
	for _, bad := range []inbox.Override{{CommentID: 13, RepoID: 1, Subject: "commit:abc", By: "ada", At: t0},
		{CommentID: 14, RepoID: 1, Subject: "commit:abc", Reason: "no one", At: t0}} {
		if _, err := s.AddOverride(ctx, &bad); !errors.Is(err, registry.ErrInvalid) {
			t.Errorf("override %+v: %v, want ErrInvalid", bad, err)
		}
	}
}
