package registry

import (
	"io"
	"io/fs"
	"path"
	"runtime"
	"strings"
	"sync"
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
// Hidden directories are skipped.
func ReadFS(fsys fs.FS, root, prefix string) ([]File, error) {
	var files []File
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
		content, err := readCapped(fsys, p)
		if err != nil {
			return err
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		files = append(files, File{Path: joinPath(prefix, rel), Content: content})
		return nil
	})
	return files, err
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

// readCapped reads at most MaxFileSize+1 bytes of a file.
func readCapped(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, MaxFileSize+1))
}

// ParseFiles parses files on every CPU and returns the documents in the
// order of files.
func ParseFiles(files []File) []*Document {
	docs := make([]*Document, len(files))
	workers := min(runtime.GOMAXPROCS(0), len(files))
	if workers <= 1 {
		for i, f := range files {
			docs[i] = Parse(f.Path, f.Content)
		}
		return docs
	}
	var wg sync.WaitGroup
	next := make(chan int, len(files))
	for i := range files {
		next <- i
	}
	close(next)
	for range workers {
		wg.Go(func() {
			for i := range next {
				docs[i] = Parse(files[i].Path, files[i].Content)
			}
		})
	}
	wg.Wait()
	return docs
}
