package main

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadBuildInfo(t *testing.T) {
	info := func(mainVersion string, settings ...string) func() (*debug.BuildInfo, bool) {
		return func() (*debug.BuildInfo, bool) {
			bi := &debug.BuildInfo{GoVersion: "go1.99.0", Main: debug.Module{Path: "github.com/sipregistry/sip", Version: mainVersion}}
			for i := 0; i+1 < len(settings); i += 2 {
				bi.Settings = append(bi.Settings, debug.BuildSetting{Key: settings[i], Value: settings[i+1]})
			}
			return bi, true
		}
	}
	none := func() (*debug.BuildInfo, bool) { return nil, false }
	tests := []struct {
		name                string
		ldVersion, ldCommit string
		read                func() (*debug.BuildInfo, bool)
		want                []string
	}{
		{"linker flags win", "v1.2.3", "abc123", info("v9.9.9", "vcs.revision", "def"), []string{"sip 1.2.3\n", "commit: abc123\n", "go: go1.99.0\n"}},
		{"go install of a tag", "", "", info("v0.4.0"), []string{"sip 0.4.0\n", "commit: unknown\n"}},
		{"a build in a clone", "", "", info("(devel)", "vcs.revision", "f00d", "vcs.time", "2026-11-25T10:00:00Z", "vcs.modified", "true"),
			[]string{"sip 0.0.0-dev\n", "commit: f00d-dirty\n", "built: 2026-11-25T10:00:00Z\n"}},
		{"no build information", "", "", none, []string{"sip 0.0.0-dev\n", "built: unknown\n", "go: go1."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			version, commit = tt.ldVersion, tt.ldCommit
			defer func() { version, commit = "", "" }()
			got := readBuildInfo(tt.read).long()
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("got\n%s\nwant it to contain %q", got, w)
				}
			}
		})
	}
}
