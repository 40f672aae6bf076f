//go:build !unix

package sqlite

import "os"

// mapHeader maps nothing here: the WAL-index header is read with ReadAt.
func mapHeader(*os.File, int) []byte { return nil }

func unmapHeader([]byte) {}

func readMapped([]byte, []byte) bool { return false }
