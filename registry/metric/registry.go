package metric

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Registry is the set of collectors that /metrics serves.
type Registry struct {
	mu         sync.Mutex
	collectors []Collector
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Register adds collectors. Two collectors may add samples to one family
// if they describe it alike.
func (r *Registry) Register(cs ...Collector) {
	r.mu.Lock()
	r.collectors = append(r.collectors, cs...)
	r.mu.Unlock()
}

// ContentType is the exposition format's media type.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// WriteText collects every registered collector and writes the result in
// the text exposition format. It fails, writing nothing, when two
// collectors describe one family differently or add the same sample.
func (r *Registry) WriteText(ctx context.Context, w io.Writer) error {
	r.mu.Lock()
	collectors := slices.Clone(r.collectors)
	r.mu.Unlock()
	var s Scrape
	for _, c := range collectors {
		c.Collect(ctx, &s)
	}
	if s.err != nil {
		return s.err
	}
	names := make([]string, 0, len(s.families))
	for name, f := range s.families {
		if len(f.samples) > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var b bytes.Buffer
	for _, name := range names {
		if err := writeFamily(&b, s.families[name]); err != nil {
			return err
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

// ServeHTTP answers a scrape: the text format, gzipped when the scraper
// accepts it, or 500 when the metrics cannot be collected.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var b bytes.Buffer
	if err := r.WriteText(req.Context(), &b); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Add("Vary", "Accept-Encoding")
	if !acceptsGzip(req.Header.Get("Accept-Encoding")) {
		h.Set("Content-Length", strconv.Itoa(b.Len()))
		w.Write(b.Bytes())
		return
	}
	h.Set("Content-Encoding", "gzip")
	gz := gzip.NewWriter(w)
	gz.Write(b.Bytes())
	gz.Close()
}

// acceptsGzip: Accept-Encoding names gzip (or *) without q=0.
func acceptsGzip(header string) bool {
	for part := range strings.SplitSeq(header, ",") {
		coding, params, _ := strings.Cut(part, ";")
		coding = strings.ToLower(strings.TrimSpace(coding))
		if coding != "gzip" && coding != "*" {
			continue
		}
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			if k, v, ok := strings.Cut(strings.TrimSpace(p), "="); ok && strings.EqualFold(k, "q") {
				if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
					q = f
				}
			}
		}
		return q > 0
	}
	return false
}

func writeFamily(b *bytes.Buffer, f *family) error {
	d := f.desc
	slices.SortFunc(f.samples, func(x, y sample) int {
		for _, i := range d.order {
			if c := cmp.Compare(x.labels[i], y.labels[i]); c != 0 {
				return c
			}
		}
		return 0
	})
	for i := 1; i < len(f.samples); i++ {
		if slices.Equal(f.samples[i-1].labels, f.samples[i].labels) {
			return fmt.Errorf("metric: %s%s is collected twice", d.name, labelText(d, f.samples[i].labels, "", 0))
		}
	}
	if d.help != "" {
		b.WriteString("# HELP ")
		b.WriteString(d.name)
		b.WriteByte(' ')
		escape(b, d.help, false)
		b.WriteByte('\n')
	}
	fmt.Fprintf(b, "# TYPE %s %s\n", d.name, d.typ)
	for _, s := range f.samples {
		switch d.typ {
		case typeCounter, typeGauge:
			writeSample(b, d, "", s.labels, "", 0, s.value)
		case typeHistogram:
			for _, bk := range s.buckets {
				writeSample(b, d, "_bucket", s.labels, "le", bk.bound, bk.value)
			}
			writeSample(b, d, "_bucket", s.labels, "le", math.Inf(1), float64(s.count))
			writeSample(b, d, "_sum", s.labels, "", 0, s.sum)
			writeSample(b, d, "_count", s.labels, "", 0, float64(s.count))
		case typeSummary:
			for _, bk := range s.buckets {
				writeSample(b, d, "", s.labels, "quantile", bk.bound, bk.value)
			}
			writeSample(b, d, "_sum", s.labels, "", 0, s.sum)
			writeSample(b, d, "_count", s.labels, "", 0, float64(s.count))
		}
	}
	return nil
}

// writeSample writes one line: the name with its suffix, the labels in
// alphabetical order then the bucket's (le or quantile), and the value.
func writeSample(b *bytes.Buffer, d *Desc, suffix string, labels []string, extra string, extraValue float64, v float64) {
	b.WriteString(d.name)
	b.WriteString(suffix)
	b.WriteString(labelText(d, labels, extra, extraValue))
	b.WriteByte(' ')
	b.WriteString(formatFloat(v))
	b.WriteByte('\n')
}

func labelText(d *Desc, labels []string, extra string, extraValue float64) string {
	if len(labels) == 0 && extra == "" {
		return ""
	}
	var b strings.Builder
	b.WriteByte('{')
	for n, i := range d.order {
		if n > 0 {
			b.WriteByte(',')
		}
		b.WriteString(d.labels[i])
		b.WriteString(`="`)
		escape(&b, labels[i], true)
		b.WriteByte('"')
	}
	if extra != "" {
		if len(labels) > 0 {
			b.WriteByte(',')
		}
		b.WriteString(extra)
		b.WriteString(`="`)
		b.WriteString(formatFloat(extraValue))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// escape writes s with backslashes and line feeds escaped, and double
// quotes too in a label value.
func escape(b io.StringWriter, s string, quotes bool) {
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '\\':
			esc = `\\`
		case '\n':
			esc = `\n`
		case '"':
			if !quotes {
				continue
			}
			esc = `\"`
		default:
			continue
		}
		b.WriteString(s[start:i])
		b.WriteString(esc)
		start = i + 1
	}
	b.WriteString(s[start:])
}

// formatFloat writes numbers as client_golang does: the shortest 'g' form,
// and +Inf, -Inf and NaN.
func formatFloat(f float64) string {
	switch {
	case f == 0:
		return "0" // and not -0
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "+Inf"
	case math.IsInf(f, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}
