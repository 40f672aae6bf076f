package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	stream, err := os.ReadFile("testdata/stream.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		in         string
		failOnSkip bool
		wantCode   int
		want       []string
		notWant    []string
	}{
		{"a failure is shown whole and fails", string(stream), false, 1,
			[]string{"x_test.go:3: boom", "--- FAIL: TestA", "FAIL\ttsx", "SKIP tsx TestB/sub: no tool", "tests: 2 passed, 1 failed, 1 skipped\n"}, []string{"=== RUN   TestC", "--- PASS"}},
		{"skips alone pass", "{\"Action\":\"start\",\"Package\":\"p\"}\n" +
			"{\"Action\":\"output\",\"Package\":\"p\",\"Test\":\"TestX\",\"Output\":\"    x_test.go:9: SKIPPING: no chromium\\n\"}\n" +
			"{\"Action\":\"skip\",\"Package\":\"p\",\"Test\":\"TestX\"}\n" +
			"{\"Action\":\"output\",\"Package\":\"p\",\"Output\":\"ok  \\tp\\t0.1s\\n\"}\n" +
			"{\"Action\":\"pass\",\"Package\":\"p\"}\n", false, 0,
			[]string{"ok  \tp\t0.1s", "== skipped tests: 1", "SKIP p TestX: SKIPPING: no chromium"}, nil},
		{"skips fail with -fail-on-skip", "{\"Action\":\"skip\",\"Package\":\"p\",\"Test\":\"TestX\"}\n", true, 1,
			[]string{"SKIP p TestX: (no reason given)", "tests were skipped"}, nil},
		{"nothing skipped", "{\"Action\":\"start\",\"Package\":\"p\"}\n{\"Action\":\"pass\",\"Package\":\"p\"}\n", true, 0,
			[]string{"== skipped tests: none (1 packages)"}, nil},
		{"lines that are not JSON are kept", "go: cannot find module\n", false, 0, []string{"go: cannot find module"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			code := run(strings.NewReader(tt.in), &out, tt.failOnSkip)
			if code != tt.wantCode {
				t.Errorf("exit %d, want %d\n%s", code, tt.wantCode, out.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out.String(), w) {
					t.Errorf("output has %q:\n%s", w, out.String())
				}
			}
		})
	}
}
