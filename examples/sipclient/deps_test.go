package sipclient_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestOutsideSip: the generated client and the example agent know sip
// only through the OpenAPI document; they import none of its packages, as
// an agent written elsewhere could not.
func TestOutsideSip(t *testing.T) {
	t.Parallel()
	const mod = "github.com/sipregistry/sip/"
	for _, pkg := range []string{mod + "examples/sipclient", mod + "examples/agent"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, mod) && dep != pkg && dep != mod+"examples/sipclient" {
				t.Errorf("%s depends on %s", pkg, dep)
			}
		}
	}
}
