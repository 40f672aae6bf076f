package main

import (
	"fmt"
	"testing"
)

func TestGCPercent(t *testing.T) {
	for _, tt := range []struct {
		live uint64
		want int
	}{
		{0, 800},
		{8 << 20, 800},   // 16× would be 1,600: capped
		{32 << 20, 400},  // 128 MiB of headroom over 32 MiB
		{128 << 20, 100}, // as much again: the default
		{1 << 30, 100},   // never below the default
	} {
		t.Run(fmt.Sprintf("%d MiB", tt.live>>20), func(t *testing.T) {
			if got := gcPercent(tt.live); got != tt.want {
				t.Errorf("gcPercent(%d MiB) = %d; want %d", tt.live>>20, got, tt.want)
			}
		})
	}
}
