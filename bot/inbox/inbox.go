// Package inbox holds the GitHub App's durable inbox: the webhook
// deliveries it acknowledged and has still to process, and the
// repositories it is installed on. The stores (registry/sqlite,
// registry/postgres) keep it; the App (package bot) works it.
package inbox

import (
	"context"
	"time"
)

// Status is where a webhook delivery stands in the inbox.
type Status string

// Delivery statuses: pending (due at NextAttempt; a failed attempt goes
// back to pending with a later NextAttempt), processing (a worker holds
// the lease), done (processed successfully: never processed again), dead
// (given up after too many attempts or a permanent error; an operator's
// redelivery, which reuses the id, queues it again).
const (
	Pending    Status = "pending"
	Processing Status = "processing"
	Done       Status = "done"
	Dead       Status = "dead"
)

// Delivery is one webhook delivery from GitHub (or work the App queued
// for itself, such as a reconciliation), kept durably from the moment it
// is acknowledged until it has been processed.
type Delivery struct {
	// ID is the X-GitHub-Delivery GUID; work the App queues itself has an
	// id that starts with "sip:".
	ID     string
	Event  string
	Action string
	// Key serialises work: two deliveries with the same key (the same
	// pull request, the same repository's default branch) are never
	// processed at once, on any replica. Empty means no constraint.
	Key         string
	Payload     []byte
	Status      Status
	Attempts    int
	ReceivedAt  time.Time
	NextAttempt time.Time
	LeaseUntil  time.Time
	DoneAt      time.Time
	LastError   string
}

// Stats describes the inbox for metrics.
type Stats struct {
	Pending, Processing, Done, Dead int
	// OldestPending is when the oldest pending delivery was received
	// (zero when none is pending).
	OldestPending time.Time
}

// Repository is a repository the GitHub App is installed on.
type Repository struct {
	ID             int64
	InstallationID int64
	FullName       string // owner/name
	DefaultBranch  string
	CloneURL       string
	Active         bool // false once uninstalled or removed from the installation
	UpdatedAt      time.Time
}

// Verification is where the default branch of a repository stands
// against its policy.
type Verification struct {
	RepoID int64
	// Refused is the first commit the policy would have refused that is
	// not resolved (reverted or overridden): the registry does not sync
	// it or anything after it. Empty when every commit is verified.
	Refused string
	// Missing says what Refused lacked, for people (Markdown).
	Missing string
	// Issue is the issue the App keeps about refused commits (0: none yet).
	Issue     int
	UpdatedAt time.Time
}

// Override is a recorded decision by a person the policy names to let a
// commit or pull request through without what the policy requires.
type Override struct {
	// CommentID is the comment that asked: an override is recorded once
	// per comment, so a replayed or edited comment adds nothing.
	CommentID int64
	RepoID    int64
	// Subject is what is overridden: "commit:<sha>" or "pull:<n>@<head>".
	Subject string
	By      string
	Reason  string
	At      time.Time
}

// Store is the App's durable inbox and its list of repositories.
type Store interface {
	// EnqueueDelivery stores a new delivery as pending and returns
	// (pending, true). For an id already stored it changes nothing and
	// returns the stored status and false, except that a dead delivery
	// is queued again (pending, with its attempts reset), since GitHub
	// reuses the id when someone redelivers it.
	EnqueueDelivery(ctx context.Context, d *Delivery) (Status, bool, error)
	// Delivery returns a delivery. Returns registry.ErrNotFound.
	Delivery(ctx context.Context, id string) (*Delivery, error)
	// ClaimDelivery leases the oldest due delivery (pending and due, or
	// processing with an expired lease) whose key no live lease holds,
	// and counts the attempt. Returns registry.ErrNotFound when none is due.
	ClaimDelivery(ctx context.Context, now, lease time.Time) (*Delivery, error)
	// CompleteDelivery marks a processing delivery done.
	CompleteDelivery(ctx context.Context, id string, at time.Time) error
	// RetryDelivery returns a processing delivery to pending, due at next.
	RetryDelivery(ctx context.Context, id string, next time.Time, reason string) error
	// KillDelivery gives up on a processing delivery (dead).
	KillDelivery(ctx context.Context, id string, reason string, at time.Time) error
	// DeliveryStats counts deliveries by status.
	DeliveryStats(ctx context.Context) (Stats, error)
	// PruneDeliveries deletes done deliveries finished before t and
	// returns how many it deleted; dead ones stay for inspection.
	PruneDeliveries(ctx context.Context, before time.Time) (int, error)

	// RepositoryEpoch counts the deactivations of repositories so far.
	// Read it before asking GitHub which repositories an installation
	// has, and write what GitHub said under it.
	RepositoryEpoch(ctx context.Context) (int64, error)
	// PutRepository adds or updates a repository (active), unless any
	// repository was deactivated since epoch was read: then it writes
	// nothing and returns registry.ErrConflict, since what GitHub said
	// may predate the removal.
	PutRepository(ctx context.Context, r *Repository, epoch int64) error
	// DeactivateRepositories marks repositories inactive (all of an
	// installation's when ids is empty) and moves the epoch on.
	DeactivateRepositories(ctx context.Context, installationID int64, ids []int64, at time.Time) error
	// Repositories lists the active repositories by name.
	Repositories(ctx context.Context) ([]*Repository, error)

	// PutVerification records where a repository's default branch stands.
	PutVerification(ctx context.Context, v *Verification) error
	// Verification returns it. Returns registry.ErrNotFound.
	Verification(ctx context.Context, repoID int64) (*Verification, error)
	// AddOverride records an override and returns true, or returns false
	// when its comment was recorded before (nothing changes).
	AddOverride(ctx context.Context, o *Override) (bool, error)
	// Overrides lists the overrides of a subject, oldest first.
	Overrides(ctx context.Context, repoID int64, subject string) ([]*Override, error)
}
