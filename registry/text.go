package registry

import (
	"strconv"
	"time"
)

func itoa(n int) string { return strconv.Itoa(n) }

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// timeLayout prints a date as it was probably written: date only when it
// falls on midnight UTC.
func timeLayout(t time.Time) string {
	if t.Equal(t.Truncate(24 * time.Hour)) {
		return time.DateOnly
	}
	return time.RFC3339
}
