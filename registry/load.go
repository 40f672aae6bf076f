package registry

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// File is one candidate SIP file and its bytes. Files larger than
// MaxFileSize are not read: Content holds only the first MaxFileSize+1
// bytes, enough for Parse to report the file as too large.
type File struct {
	Path    string
	Content []byte
}

// IsSIPFile reports whether a file name is read as a SIP document: every
// Markdown file except a README. Hidden files are skipped.
func IsSIPFile(name string) bool {
	base := path.Base(name)
	return strings.EqualFold(path.Ext(base), ".md") &&
		!strings.EqualFold(base, "README.md") &&
		!strings.HasPrefix(base, ".")
}

// ReadFS reads every SIP file under root in fsys (root itself may be a
// file). Paths in the result are prefix joined with the path below root.
// Hidden directories are skipped. The walk lists the files; they are
// then read on every CPU, each into a buffer of its size.
func ReadFS(fsys fs.FS, root, prefix string) ([]File, error) {
	var names []string
	err := fs.WalkDir(fsys, root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if p != root && strings.HasPrefix(e.Name(), ".") {
				return fs.SkipDir
			}
			return nil
		}
		if p != root && !IsSIPFile(p) {
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		names = append(names, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	files := make([]File, len(names))
	errs := make([]error, len(names))
	each(len(names), func(i int) {
		p := names[i]
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		files[i].Path = joinPath(prefix, rel)
		files[i].Content, errs[i] = readCapped(fsys, p)
	})
	return files, errors.Join(errs...)
}

func joinPath(prefix, rel string) string {
	switch {
	case rel == "":
		return prefix
	case prefix == "" || prefix == ".":
		return rel
	}
	return strings.TrimSuffix(prefix, "/") + "/" + rel
}

// readCapped reads at most MaxFileSize+1 bytes of a file, into a buffer
// of the file's size when it can tell (as os.ReadFile does), so reading
// a corpus allocates what it holds and no more.
func readCapped(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size := 512
	if info, err := f.Stat(); err == nil && info.Size() >= 0 {
		size = int(min(info.Size(), MaxFileSize)) + 1 // +1 sees EOF without growing
	}
	buf := make([]byte, 0, size)
	for len(buf) <= MaxFileSize {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), MaxFileSize+1)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return buf, nil
}

// each calls f(i) for every i below n on every CPU.
func each(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers <= 1 {
		for i := range n {
			f(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				f(i)
			}
		})
	}
	wg.Wait()
}

// ParseFiles parses files on every CPU and returns the documents in the
// order of files.
func ParseFiles(files []File) []*Document {
	docs := make([]*Document, len(files))
	each(len(files), func(i int) { docs[i] = Parse(files[i].Path, files[i].Content) })
	return docs
}
