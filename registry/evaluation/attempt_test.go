package evaluation_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/evaluation"
)

func TestPageResults(t *testing.T) {
	at := time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC)
	results := func(n int) []*evaluation.Result {
		rs := make([]*evaluation.Result, n)
		for i := range rs {
			rs[i] = &evaluation.Result{ID: fmt.Sprintf("r%d", i), CompletedAt: at.Add(-time.Duration(i) * time.Minute)}
		}
		return rs
	}
	for _, tc := range []struct {
		fetched, limit, want int
		more                 bool
	}{
		{0, 2, 0, false},
		{2, 2, 2, false}, // exactly a page: no empty page after it
		{3, 2, 2, true},
		{1, 50, 1, false},
	} {
		t.Run(fmt.Sprintf("%d rows, limit %d", tc.fetched, tc.limit), func(t *testing.T) {
			got, next := evaluation.PageResults(results(tc.fetched), tc.limit)
			if len(got) != tc.want || (next != "") != tc.more {
				t.Errorf("PageResults(%d rows, limit %d) = %d rows, next %q; want %d rows, more=%v", tc.fetched, tc.limit, len(got), next, tc.want, tc.more)
				return
			}
			if next == "" {
				return
			}
			last := got[len(got)-1]
			cAt, cID, err := registry.DecodeCursor(next)
			if err != nil || !cAt.Equal(last.CompletedAt) || cID != last.ID {
				t.Errorf("cursor %q decodes to (%v, %q, %v); want the last row shown (%v, %q)", next, cAt, cID, err, last.CompletedAt, last.ID)
			}
		})
	}
}

func TestDecodeCursorRejects(t *testing.T) {
	for _, c := range []string{"", "!!", registry.EncodeCursor(time.Time{}, "")[:4], "bm90LWEtY3Vyc29y"} {
		if _, _, err := registry.DecodeCursor(c); !errors.Is(err, registry.ErrInvalid) {
			t.Errorf("DecodeCursor(%q) err = %v; want registry.ErrInvalid", c, err)
		}
	}
}
