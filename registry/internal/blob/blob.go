// Package blob compresses the large opaque values the stores keep, such
// as webhook payloads (GitHub's are 10–30 KB of JSON that compress about
// sevenfold), so that writing them costs less I/O. Values are stored
// gzipped; anything without gzip's magic bytes is returned unchanged, so
// rows written before compression still read.
package blob

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
)

// Max is the largest value Decompress returns.
const Max = 64 << 20

var writers = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	return w
}}

// Compress gzips b (fastest level).
func Compress(b []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(b)/4 + 64)
	w := writers.Get().(*gzip.Writer)
	w.Reset(&buf)
	w.Write(b)
	w.Close()
	writers.Put(w)
	return buf.Bytes()
}

// Decompress reverses Compress; values that are not gzipped are returned
// as they are.
func Decompress(b []byte) ([]byte, error) {
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		return b, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	out, err := io.ReadAll(io.LimitReader(r, Max+1))
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if len(out) > Max {
		return nil, fmt.Errorf("blob: more than %d bytes", Max)
	}
	return out, nil
}
