package registry

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// SchemaTooNewError means the database was migrated by a newer sip than
// the one opening it: an older binary would misread what it does not
// know, so it refuses to start. Migrations only go forward.
type SchemaTooNewError struct {
	Current int64 // the database's schema version
	Known   int64 // the newest schema version this binary knows
}

func (e *SchemaTooNewError) Error() string {
	return fmt.Sprintf("the database's schema is at version %d, newer than this sip knows (%d): a newer sip migrated it. "+
		"Run a sip whose `sip --version` says schema %d or more (the one that migrated it, or newer); "+
		"to go back to this version, restore the backup taken before the upgrade", e.Current, e.Known, e.Current)
}

// Unwrap makes it a configuration error (ErrInvalid): the wrong binary.
func (e *SchemaTooNewError) Unwrap() error { return ErrInvalid }

// LatestMigration is the number of the newest migration in dir of fsys
// (files named NNNNN_what.sql), 0 when there is none: the schema version
// a binary with those migrations knows.
func LatestMigration(fsys fs.FS, dir string) int64 {
	entries, _ := fs.ReadDir(fsys, dir)
	var v int64
	for _, e := range entries {
		n, _, _ := strings.Cut(e.Name(), "_")
		if x, err := strconv.ParseInt(n, 10, 64); err == nil && x > v {
			v = x
		}
	}
	return v
}
