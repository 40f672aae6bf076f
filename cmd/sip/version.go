package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
)

// Set at build time by `make build` and the release (GoReleaser):
//
//	-X main.version=1.2.3 -X main.commit=<sha> -X main.date=<RFC 3339>
//
// A binary built without them (go build, go install) reads what the Go
// toolchain recorded: the module version for `go install …@v1.2.3`, the
// VCS revision and time for a build in a clone.
var (
	version = ""
	commit  = ""
	date    = ""
)

// develVersion is the version of a build that names none: semver, sorted
// below every release.
const develVersion = "0.0.0-dev"

// buildInfo is what `sip --version` prints.
type buildInfo struct {
	Version, Commit, Date, GoVersion string
	Modified                         bool
}

// readBuildInfo fills what the linker flags left empty from the build
// information the Go toolchain embeds.
func readBuildInfo(read func() (*debug.BuildInfo, bool)) buildInfo {
	b := buildInfo{Version: version, Commit: commit, Date: date, GoVersion: runtime.Version()}
	bi, ok := read()
	if ok {
		if b.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			b.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if b.Commit == "" {
					b.Commit = s.Value
				}
			case "vcs.time":
				if b.Date == "" {
					b.Date = s.Value
				}
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
		if bi.GoVersion != "" {
			b.GoVersion = bi.GoVersion
		}
	}
	b.Version = strings.TrimPrefix(b.Version, "v")
	if b.Version == "" {
		b.Version = develVersion
	}
	return b
}

// String is the first line of `sip --version`, and the version the server
// reports.
func (b buildInfo) String() string { return b.Version }

func (b buildInfo) long() string {
	c := b.Commit
	if c == "" {
		c = "unknown"
	} else if b.Modified && !strings.HasSuffix(c, "-dirty") {
		c += "-dirty"
	}
	d := b.Date
	if d == "" {
		d = "unknown"
	}
	return fmt.Sprintf("sip %s\ncommit: %s\nbuilt: %s\ngo: %s\nschema: %s\n", b.Version, c, d, b.GoVersion, schemaVersions())
}

// sipVersion is this binary's version, e.g. "1.2.3" or "0.0.0-dev".
func sipVersion() string { return readBuildInfo(debug.ReadBuildInfo).Version }

func runVersion(_ context.Context, e env, args []string) int {
	flags := newFlagSet("version", "", "Prints the version of sip, the commit it was built from, when, and with which Go.")
	if _, code, ok := parseFlags(flags, e, args); !ok {
		return code
	}
	fmt.Fprint(e.stdout, readBuildInfo(debug.ReadBuildInfo).long())
	return exitOK
}
