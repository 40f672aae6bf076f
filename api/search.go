package api

import (
	"context"
	"net/http"
	"regexp"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry"
)

// Search finds SIPs in the snapshot (in memory: a registry holds a few
// hundred) and public agents in the store.

const (
	maxQueryRunes  = 100
	maxSIPHits     = 30
	maxAgentHits   = 20
	snippetContext = 80
)

// searchDoc is an entry's text, lower-cased once per snapshot.
type searchDoc struct {
	e                      *registry.Entry
	id, name, module, body string
	ref                    string // "sip-N"
}

func (s *snapshot) docs() []searchDoc {
	s.searchOnce.Do(func() {
		for _, e := range s.entries {
			if e.Removed {
				continue
			}
			s.searchDocs = append(s.searchDocs, searchDoc{e: e, id: strings.ToLower(e.ID), name: strings.ToLower(e.Name),
				module: strings.ToLower(e.Module), body: strings.ToLower(e.Body), ref: "sip-" + itoa(e.Number)})
		}
	})
	return s.searchDocs
}

// sipHit is a SIP that matched, with where.
type sipHit struct {
	E       *registry.Entry
	Snippet string // the body around the first match, when the body matched
	score   int
	word    string // the first word found only in the body
}

// searchSIPs ranks the entries every word of q matches: an exact id or
// number first, then names, modules, ids and last bodies.
func searchSIPs(snap *snapshot, q string) []sipHit {
	words := strings.Fields(strings.ToLower(q))
	if len(words) == 0 {
		return nil
	}
	var hits []sipHit
	for _, d := range snap.docs() {
		total, bodyWord := 0, ""
		for _, w := range words {
			score := 0
			switch {
			case w == d.id || w == d.ref || w == d.ref[4:]:
				score = 1000
			case strings.HasPrefix(d.name, w):
				score = 60
			case strings.Contains(" "+d.name, " "+w):
				score = 50
			case strings.Contains(d.name, w):
				score = 40
			case w == d.module:
				score = 30
			case strings.Contains(d.id, w), strings.Contains(d.module, w):
				score = 20
			default:
				if strings.Contains(d.body, w) {
					score = 10
					if bodyWord == "" {
						bodyWord = w
					}
				}
			}
			if score == 0 {
				total = 0
				break
			}
			total += score
		}
		if total == 0 {
			continue
		}
		hits = append(hits, sipHit{E: d.e, score: total, word: bodyWord})
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return hits[i].E.Number < hits[j].E.Number
	})
	hits = hits[:min(len(hits), maxSIPHits)]
	finders := map[string]*regexp.Regexp{}
	for i, h := range hits {
		if h.word == "" {
			continue
		}
		re := finders[h.word]
		if re == nil {
			re = regexp.MustCompile("(?i)" + regexp.QuoteMeta(h.word))
			finders[h.word] = re
		}
		hits[i].Snippet = snippet(h.E.Body, re)
	}
	return hits
}

// snippet is the body's text around the first match of find (the word
// the search found, ignoring case), on one line.
func snippet(body string, find *regexp.Regexp) string {
	loc := find.FindStringIndex(body)
	if loc == nil { // lower-casing matched what case folding does not
		return ""
	}
	from, to := max(loc[0]-snippetContext, 0), min(loc[1]+snippetContext, len(body))
	for from > 0 && !utf8.RuneStart(body[from]) {
		from--
	}
	for to < len(body) && !utf8.RuneStart(body[to]) {
		to++
	}
	out := strings.Join(strings.Fields(body[from:to]), " ")
	if from > 0 {
		out = "…" + out
	}
	if to < len(body) {
		out += "…"
	}
	return out
}

type searchPage struct {
	pageBase
	Q      string
	SIPs   []sipHit
	Agents []registry.AgentCard
	// TooLong says the query was cut to maxQueryRunes.
	TooLong bool
}

// search serves /search?q=: SIPs (by id, number, name, module and text)
// and public agents (by name and description).
func (s *Server) search(c echo.Context) error {
	ctx := c.Request().Context()
	q := strings.TrimSpace(c.QueryParam("q"))
	page := searchPage{pageBase: pageBase{Title: "Search", Nav: "search", Version: s.version}}
	if !utf8.ValidString(q) {
		q = strings.ToValidUTF8(q, "")
	}
	if utf8.RuneCountInString(q) > maxQueryRunes {
		q, page.TooLong = string([]rune(q)[:maxQueryRunes]), true
	}
	page.Q = q
	if q != "" {
		page.Title = "Search: " + q
		snap, err := s.catalog.current(ctx)
		if err != nil {
			return err
		}
		page.SIPs = searchSIPs(snap, q)
		if page.Agents, err = s.searchAgents(ctx, q); err != nil {
			return err
		}
	}
	return s.renderPage(c, http.StatusOK, "search", page)
}

// searchAgents finds public agents in the index, and keeps those the
// store still says are public.
func (s *Server) searchAgents(ctx context.Context, q string) ([]registry.AgentCard, error) {
	all, err := s.agentIndex.current(ctx)
	if err != nil {
		return nil, err
	}
	hits := matchAgents(all, q, maxAgentHits)
	if len(hits) == 0 {
		return nil, nil
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	public, err := s.runtime.PublicAgentNames(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := hits[:0]
	for _, h := range hits {
		if name, ok := public[h.ID]; ok {
			h.Name = name
			out = append(out, h)
		}
	}
	return out, nil
}
