package proposal

import "context"

// GitHub is what the service asks of GitHub for a signed-in person
// (bot/author implements it with the GitHub App's user-to-server
// authorization).
type GitHub interface {
	// AuthorizeURL is GitHub's sign-in page, which sends the person back
	// to redirectURI with a code and the state.
	AuthorizeURL(state, redirectURI string) string
	// Exchange trades a sign-in code for the person's token.
	Exchange(ctx context.Context, code, redirectURI string) (string, error)
	// Login is the login of the token's person.
	Login(ctx context.Context, token string) (string, error)
	// Open opens a pull request as the token's person.
	Open(ctx context.Context, token string, ch Change) (Opened, error)
	// Claimed lists the SIP numbers open pull requests of owner/repo add
	// in dir, each with the earliest pull request that claims it.
	Claimed(ctx context.Context, token, owner, repo, dir string) (map[int]string, error)
	// Status reads a pull request's state, checks and reviews.
	Status(ctx context.Context, token, owner, repo string, number int) (Status, error)
}

// Change is one file proposed to a repository as a pull request.
type Change struct {
	Owner, Repo string // the repository the pull request is for
	Path        string
	Content     []byte
	Branch      string // the branch's name; taken, it gets -2, -3, …
	Message     string // the commit's
	Title, Body string // the pull request's
	Draft       bool
}

// Opened is a pull request opened for a change.
type Opened struct {
	Number int
	URL    string
	Branch string
	// Fork is the person's fork the branch is on ("" when they could
	// push to the repository).
	Fork string
}

// Status is a pull request's state, its head's checks and its reviews.
type Status struct {
	Number   int
	URL      string
	Title    string
	Author   string
	State    string // open, closed
	Merged   bool
	Draft    bool
	HeadSHA  string
	Checks   []Check
	Reviews  []Review
	Approved bool // an approval stands: someone's latest review approves and nobody's asks for changes
}

// Check is one check run on a pull request's head.
type Check struct {
	Name, Status, Conclusion, Title string
}

// Review is a person's latest review.
type Review struct {
	User, State string
}
