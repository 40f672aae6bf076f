package siptest

import (
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/sipregistry/sip/registry"
)

// CorpusFiles reads a SafeMolt-shaped corpus (evaluations/ and
// schools/*/evaluations/) from fsys: every SIP file except the
// byte-identical copies under schools/foundation and the school template,
// so each real SIP is read once. From SafeMolt's commit that is 28 files.
func CorpusFiles(fsys fs.FS) ([]registry.File, error) {
	var files []registry.File
	err := fs.WalkDir(fsys, ".", func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p == "schools/foundation" || p == "schools/_templates" {
				return fs.SkipDir
			}
			return nil
		}
		if path.Base(path.Dir(p)) != "evaluations" || !registry.IsSIPFile(p) {
			return nil
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		files = append(files, registry.File{Path: p, Content: b})
		return nil
	})
	slices.SortFunc(files, func(a, b registry.File) int { return strings.Compare(a.Path, b.Path) })
	return files, err
}

var (
	sipLine    = regexp.MustCompile(`(?m)^sip: *"?(\d+)"?[ \t]*$`)
	idLine     = regexp.MustCompile(`(?m)^id: *"?([A-Za-z0-9_-]+)"?[ \t]*$`)
	prereqFlow = regexp.MustCompile(`(?m)^prerequisites: *\[([^\]\n]*)\]`)
	prereqItem = regexp.MustCompile(`(?m)^(prerequisites:\n(?:  - .*\n)+)`)
)

// Renumber makes times copies of a corpus as one SIP folder: copy k
// gives every file a new number (k*len(files)+i+1, in file order), the
// file name that goes with it, and ids (and the prerequisites naming
// them) suffixed with -k, so copies neither collide nor change what the
// validation finds in each file. It is the "real corpus ×250" of the
// benchmarks: the real SIPs' size, shape and defects, at scale.
func Renumber(files []registry.File, times int) []registry.File {
	out := make([]registry.File, 0, len(files)*times)
	for k := range times {
		suffix := fmt.Sprintf("-%d", k)
		rename := func(ids string) string {
			var parts []string
			for _, id := range strings.Split(ids, ",") {
				if id = strings.TrimSpace(id); id != "" {
					parts = append(parts, id+suffix)
				}
			}
			return strings.Join(parts, ", ")
		}
		for i, f := range files {
			n := k*len(files) + i + 1
			s := string(f.Content)
			end := strings.Index(s[min(4, len(s)):], "\n---") + 4
			if end < 4 {
				end = len(s)
			}
			fm, body := s[:end], s[end:]
			fm = sipLine.ReplaceAllString(fm, fmt.Sprintf("sip: %d", n))
			fm = idLine.ReplaceAllString(fm, "id: ${1}"+suffix)
			fm = prereqFlow.ReplaceAllStringFunc(fm, func(m string) string {
				return "prerequisites: [" + rename(prereqFlow.FindStringSubmatch(m)[1]) + "]"
			})
			fm = prereqItem.ReplaceAllStringFunc(fm, func(m string) string {
				return strings.ReplaceAll(strings.TrimSuffix(m, "\n"), "\n", suffix+"\n") + suffix + "\n"
			})
			fm = strings.Replace(fm, "prerequisites:"+suffix+"\n", "prerequisites:\n", 1)
			out = append(out, registry.File{Path: registry.DefaultDir + "/" + registry.FileName(n), Content: []byte(fm + body)})
		}
	}
	return out
}
