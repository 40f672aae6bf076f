//go:build unix

package sqlite

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReadMappedFault: a mapping whose file was cut short under it reads
// as not ok instead of ending the process, and reads again once the file
// has its length back.
func TestReadMappedFault(t *testing.T) {
	path := filepath.Join(t.TempDir(), "db-shm")
	page := make([]byte, 2*walIndexHeader)
	for i := range page {
		page[i] = byte(i)
	}
	if err := os.WriteFile(path, page, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if m := mapHeader(f, 4*walIndexHeader); m != nil {
		unmapHeader(m)
		t.Fatal("mapped more than the file holds")
	}
	m := mapHeader(f, len(page))
	if m == nil {
		t.Fatal("not mapped")
	}
	defer unmapHeader(m)
	var h [2 * walIndexHeader]byte
	if !readMapped(h[:], m) || string(h[:]) != string(page) {
		t.Fatalf("read %v; want %v", h, page)
	}
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	if readMapped(h[:], m) {
		t.Error("read a mapping past its file's end; want a fault reported as not ok")
	}
	if err := os.WriteFile(path, page, 0o600); err != nil {
		t.Fatal(err)
	}
	if h = [2 * walIndexHeader]byte{}; !readMapped(h[:], m) || string(h[:]) != string(page) {
		t.Errorf("after the file grew back: read %v; want %v", h, page)
	}
}
