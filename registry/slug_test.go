package registry

import "testing"

// The ASCII path of githubSlug must give what the general one gives.
func TestGithubSlugASCII(t *testing.T) {
	t.Parallel()
	var all []byte
	for c := byte(1); c < 0x80; c++ {
		all = append(all, c)
	}
	for _, s := range []string{"", "Abstract", "3. Procedure (Proctor Script)", "How it runs", "A_b-C d\te", "Émile's café", string(all)} {
		if got, want := githubSlug(s), githubSlugUnicode(s); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", s, got, want)
		}
	}
}
