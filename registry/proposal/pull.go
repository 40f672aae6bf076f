package proposal

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// Proposal is a SIP file a signed-in person proposes.
type Proposal struct {
	Content []byte
	// Check checks the file against the registry, with the numbers open
	// pull requests claim at this moment (registry.CheckDraft).
	Check func(claimed map[int]string) registry.DraftCheck
	// Draft opens the pull request as a draft.
	Draft bool
	// Note is the person's own words for the pull request's description.
	Note string
}

// Refused is a proposal that does not pass the check at the moment of
// submitting: its problems, and the number a new SIP takes now (when
// another pull request took its number since the preview).
type Refused struct {
	Check registry.DraftCheck
	// Taken is set when the SIP's number is claimed by an open pull
	// request; NextNumber is the next free one.
	Taken      bool
	NextNumber int
}

func (r *Refused) Error() string {
	if r.Taken {
		return fmt.Sprintf("SIP number %d was taken by another pull request; take %d", r.Check.Preview.Number, r.NextNumber)
	}
	return "the SIP does not pass the repository's rules"
}

// Unwrap makes a refusal ErrInvalid.
func (r *Refused) Unwrap() error { return registry.ErrInvalid }

// Propose opens a pull request with the file as the session's person. The
// file is checked once more, with the numbers open pull requests claim
// now (the earliest open pull request keeps a number, as the App rules):
// a number taken since the preview refuses it with the next free number.
func (s *Service) Propose(ctx context.Context, session string, p Proposal) (Opened, error) {
	login, tok, err := s.token(ctx, session)
	if err != nil {
		return Opened{}, err
	}
	if len(p.Content) > s.cfg.MaxDraftBytes {
		return Opened{}, fmt.Errorf("the file is %d bytes, over the limit of %d: %w", len(p.Content), s.cfg.MaxDraftBytes, registry.ErrTooLarge)
	}
	claimed, err := s.cfg.GitHub.Claimed(ctx, tok, s.cfg.Owner, s.cfg.Repo, s.cfg.Dir)
	if err != nil {
		return Opened{}, err
	}
	ch := p.Check(claimed)
	if errs, _ := registry.Count(ch.Problems); errs > 0 || ch.Entry == nil {
		r := &Refused{Check: ch, NextNumber: ch.Preview.NextNumber}
		for _, pr := range ch.Problems {
			r.Taken = r.Taken || pr.Rule == "number-collision"
		}
		return Opened{}, r
	}
	if ch.Preview.Change == "unchanged" {
		return Opened{}, fmt.Errorf("the file is the registry's own: nothing to propose: %w", registry.ErrInvalid)
	}
	return s.cfg.GitHub.Open(ctx, tok, s.change(login, ch, p))
}

// change is the pull request of a checked proposal: its branch, commit
// and the repository's template filled in.
func (s *Service) change(login string, ch registry.DraftCheck, p Proposal) Change {
	pv := ch.Preview
	sip := "SIP-" + strconv.Itoa(pv.Number)
	c := Change{Owner: s.cfg.Owner, Repo: s.cfg.Repo, Path: ch.Path, Content: p.Content, Draft: p.Draft}
	if pv.Change == "new" {
		c.Branch = branchName("sip-" + strconv.Itoa(pv.Number) + "-" + pv.ID)
		c.Title = sip + ": " + pv.Name
		c.Message = "Add " + sip + " (" + pv.ID + ")"
	} else {
		c.Branch = branchName("sip-" + strconv.Itoa(pv.Number) + "-" + pv.ID + "-" + pv.Version)
		c.Title = sip + ": " + pv.Name + " (version " + pv.Version + ")"
		c.Message = "Change " + sip + " (" + pv.ID + ") to version " + pv.Version
	}
	var b strings.Builder
	b.WriteString("## What this SIP does\n\n")
	if note := strings.TrimSpace(p.Note); note != "" {
		b.WriteString(note + "\n\n")
	}
	fmt.Fprintf(&b, "%s (`%s`, %s, %s", sip, pv.ID, strings.ReplaceAll(string(pv.Type), "_", " "), pv.Status)
	if pv.Handler != "" {
		fmt.Fprintf(&b, ", handler `%s`", pv.Handler)
	}
	if pv.Change == "new" {
		fmt.Fprintf(&b, ") is new, at version %s.\n\n", pv.Version)
	} else {
		fmt.Fprintf(&b, ") moves from version %s to %s.\n\n", pv.PreviousVersion, pv.Version)
	}
	b.WriteString("## Checklist\n\n")
	fmt.Fprintf(&b, "- [x] The file is `%s` and `sip:` is `%d`.\n", ch.Path, pv.Number)
	b.WriteString("- [x] The registry's editor checked it with the repository's rules (the same as `sip validate`): no errors.\n")
	if pv.Change != "new" {
		b.WriteString("- [x] `version` is raised and `updated_at` moved forward.\n")
	}
	b.WriteString("\n## For reviewers\n\n")
	fmt.Fprintf(&b, "Proposed from the registry's web editor by @%s, as themselves; the SIP App's check follows.\n", login)
	c.Body = b.String()
	return c
}

// branchName keeps lower-case letters, digits and single dashes.
func branchName(s string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case !dash && b.Len() > 0:
			b.WriteByte('-')
			dash = true
		}
		if b.Len() >= 80 {
			break
		}
	}
	return strings.Trim(b.String(), "-")
}

// Claimed lists the SIP numbers the repository's open pull requests add,
// as the session's person sees them, each with the earliest pull request
// that claims it.
func (s *Service) Claimed(ctx context.Context, session string) (map[int]string, error) {
	_, tok, err := s.token(ctx, session)
	if err != nil {
		return nil, err
	}
	return s.cfg.GitHub.Claimed(ctx, tok, s.cfg.Owner, s.cfg.Repo, s.cfg.Dir)
}

// PullStatus reads a pull request of the repository: its state, checks
// and reviews.
func (s *Service) PullStatus(ctx context.Context, session string, number int) (Status, error) {
	_, tok, err := s.token(ctx, session)
	if err != nil {
		return Status{}, err
	}
	return s.cfg.GitHub.Status(ctx, tok, s.cfg.Owner, s.cfg.Repo, number)
}
