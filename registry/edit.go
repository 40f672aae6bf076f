package registry

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"golang.org/x/mod/semver"
)

// editProblems applies the edit rules: each SIP of the base is matched to
// the head by path (or, for a moved file, by id) and compared.
func editProblems(base *Snapshot, head []*Document) []Problem {
	var out []Problem
	byPath := map[string]*Document{}
	byID := map[string]*Document{}
	for _, d := range head {
		byPath[d.Path] = d
		if d.SIP != nil && d.SIP.ID != "" {
			byID[d.SIP.ID] = d
		}
	}
	for _, b := range base.Docs {
		h := byPath[b.Path]
		if h == nil && b.SIP != nil {
			h = byID[b.SIP.ID]
		}
		if h == nil {
			what := b.Path
			if b.SIP != nil {
				what = FileName(b.SIP.Number) + " (" + b.SIP.ID + ")"
			}
			out = append(out, problemAt(b, fileSpan, SeverityError, "sip-deleted",
				"Restore the file and set `status: deprecated` instead.",
				"%s exists in %s and was deleted; merged SIPs are deprecated, never deleted", what, base.Name))
			continue
		}
		if b.SIP == nil || h.SIP == nil {
			continue
		}
		out = append(out, compareEdit(base.Name, b.SIP, h)...)
		if b.SHA256() != h.SHA256() {
			out = append(out, changedProblems(base.Name, b, h)...)
		}
	}
	return out
}

func compareEdit(baseName string, b *SIP, hd *Document) []Problem {
	var out []Problem
	h := hd.SIP
	if b.Number > 0 && h.Number > 0 && b.Number != h.Number {
		out = append(out, problemAt(hd, hd.Span("sip"), SeverityError, "sip-renumbered",
			"Restore sip: "+itoa(b.Number)+".", "sip changed from %d in %s to %d; SIP numbers never change once merged", b.Number, baseName, h.Number))
	}
	if b.ID != "" && h.ID != "" && b.ID != h.ID {
		out = append(out, problemAt(hd, hd.Span("id"), SeverityError, "id-changed",
			"Restore id: "+b.ID+".", "id changed from %q in %s to %q; ids never change once merged", b.ID, baseName, h.ID))
	}
	if b.Status != "" && h.Status != "" && !b.Status.CanBecome(h.Status) {
		out = append(out, problemAt(hd, hd.Span("status"), SeverityError, "status-transition",
			"Status moves only draft → active → deprecated (or draft → deprecated).",
			"status cannot move from %s to %s", b.Status, h.Status))
	}
	return out
}

// changedProblems applies the rules for a SIP whose content changed.
func changedProblems(baseName string, b *Document, hd *Document) []Problem {
	var out []Problem
	bs, h := b.SIP, hd.SIP
	if bs.Version != "" && h.Version != "" && semver.Compare("v"+h.Version, "v"+bs.Version) <= 0 {
		out = append(out, problemAt(hd, hd.Span("version"), SeverityError, "version-not-bumped",
			"Raise it above "+bs.Version+", e.g. "+nextPatch(bs.Version)+".",
			"the SIP changed but version %s is not greater than %s in %s", h.Version, bs.Version, baseName))
	}
	if !bs.UpdatedAt.IsZero() && !h.UpdatedAt.IsZero() && !h.UpdatedAt.After(bs.UpdatedAt) {
		out = append(out, problemAt(hd, hd.Span("updated_at"), SeverityError, "updated-at-not-advanced",
			"Set updated_at to the time of this change; a timestamp such as "+laterStamp(bs.UpdatedAt)+" (RFC 3339) allows several changes on one day.",
			"the SIP changed but updated_at %s is not after %s in %s", h.UpdatedAt.Format(timeLayout(h.UpdatedAt)),
			bs.UpdatedAt.Format(timeLayout(bs.UpdatedAt)), baseName))
	}
	return out
}

// collisionProblems reports new SIPs whose numbers other open pull
// requests claim. A SIP already in the base is not new: the other pull
// request is the one that collides.
func collisionProblems(opts Options, head []*Document) []Problem {
	if len(opts.Claimed) == 0 {
		return nil
	}
	inBase := map[int]bool{}
	if opts.Base != nil {
		for _, b := range opts.Base.Docs {
			if b.SIP != nil {
				inBase[b.SIP.Number] = true
			}
		}
	}
	next := nextFree(opts, head)
	var out []Problem
	for _, d := range head {
		if d.SIP == nil || d.SIP.Number <= 0 || inBase[d.SIP.Number] {
			continue
		}
		if who, ok := opts.Claimed[d.SIP.Number]; ok {
			out = append(out, problemAt(d, d.Span("sip"), SeverityError, "number-collision",
				fmt.Sprintf("Take %d, the next number nobody holds or claims: set sip: %d and rename the file to %s.", next, next, FileName(next)),
				"SIP number %d is already claimed by %s, opened earlier (the earliest open pull request keeps a number)", d.SIP.Number, who))
		}
	}
	return out
}

// nextFree is the number after every number held in the base or the head
// and every number claimed elsewhere.
func nextFree(opts Options, head []*Document) int {
	top := 0
	for n := range opts.Claimed {
		top = max(top, n)
	}
	docs := head
	if opts.Base != nil {
		docs = append(slices.Clip(head), opts.Base.Docs...)
	}
	for _, d := range docs {
		if d.SIP != nil {
			top = max(top, d.SIP.Number)
		}
	}
	return top + 1
}

func nextPatch(v string) string {
	core, _, _ := strings.Cut(v, "-")
	core, _, _ = strings.Cut(core, "+")
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return "1.0.0"
	}
	return parts[0] + "." + parts[1] + "." + itoa(atoi(parts[2])+1)
}

// laterStamp is a timestamp after t, as an example of the form that
// tells two changes on one day apart.
func laterStamp(t time.Time) string {
	t = t.UTC()
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return t.Add(14*time.Hour + 30*time.Minute).Format(time.RFC3339)
	}
	return t.Add(time.Minute).Truncate(time.Minute).Format(time.RFC3339)
}
