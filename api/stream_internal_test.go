package api

import (
	"testing"

	"github.com/sipregistry/sip/registry/evaluation"
)

func TestContiguous(t *testing.T) {
	msgs := func(seqs ...int64) []evaluation.SessionMessage {
		var out []evaluation.SessionMessage
		for _, s := range seqs {
			out = append(out, evaluation.SessionMessage{Sequence: s})
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		fresh []evaluation.SessionMessage
		since int64
		want  []int64
		ok    bool
	}{
		{"nothing", nil, 3, nil, true},
		{"in order", msgs(4, 5), 3, []int64{4, 5}, true},
		{"published out of order", msgs(5, 4, 6), 3, []int64{4, 5, 6}, true},
		{"some sent already", msgs(2, 3, 4), 3, []int64{4}, true},
		{"a gap: posted elsewhere", msgs(5, 6), 3, nil, false},
		{"a gap in the middle", msgs(4, 6), 3, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := contiguous(tc.fresh, tc.since)
			var seqs []int64
			for _, m := range got {
				seqs = append(seqs, m.Sequence)
			}
			if ok != tc.ok || len(seqs) != len(tc.want) {
				t.Fatalf("%v, %v; want %v, %v", seqs, ok, tc.want, tc.ok)
			}
			for i := range seqs {
				if seqs[i] != tc.want[i] {
					t.Errorf("%v, want %v", seqs, tc.want)
				}
			}
		})
	}
}
