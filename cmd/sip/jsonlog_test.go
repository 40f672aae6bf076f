package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sipregistry/sip/api"
	"github.com/sipregistry/sip/registry"
	"github.com/sipregistry/sip/registry/sqlite/sqlitetest"
)

// oddStrings need escaping, or look as if they might.
var oddStrings = []string{
	"", "plain", `/api/v1/evaluations`, `quote " and backslash \`, "tab\tnew line\ncarriage\r",
	"bell\a nul\x00 esc\x1b del\x7f", "<script>&amp;</script>", "naïve café 日本語 🙂",
	"invalid \xff\xfe utf-8 \xc3", "line\u2028separator\u2029paragraph", "/claim/[redacted]",
	"Mozilla/5.0 (X11; Linux x86_64) \"quoted\" agent", strings.Repeat("long/", 400),
}

// accessRecord builds a record as the API's access log does.
func accessRecord(t time.Time, path, remote string) slog.Record {
	tail := []slog.Attr{slog.Int("status", 200), slog.Int64("bytes", 5123), slog.Int64("duration_us", 17), slog.String("remote", remote)}
	r := slog.NewRecord(t, slog.LevelInfo, "request", 0)
	r.AddAttrs(slog.String("request_id", "0123456789abcdef01234567"), slog.String("method", "GET"),
		slog.String("route", "/api/v1/evaluations"), slog.String("path", path), slog.Attr{Value: slog.GroupValue(tail...)})
	return r
}

// TestJSONLogHandler: every record is written exactly as slog's
// JSONHandler writes it, those encoded here and those handed over.
func TestJSONLogHandler(t *testing.T) {
	at := time.Date(2026, 11, 26, 6, 30, 1, 234500000, time.UTC)
	zone := time.FixedZone("east", 5*3600+30*60)
	type rec struct {
		name string
		r    slog.Record
	}
	var recs []rec
	add := func(name string, level slog.Level, msg string, when time.Time, attrs ...slog.Attr) {
		r := slog.NewRecord(when, level, msg, 0)
		r.AddAttrs(attrs...)
		recs = append(recs, rec{name, r})
	}
	for i, s := range oddStrings {
		recs = append(recs, rec{"access line, odd path " + strconv.Itoa(i), accessRecord(at, s, s)})
		add("odd message "+strconv.Itoa(i), slog.LevelInfo, s, at)
		add("odd key "+strconv.Itoa(i), slog.LevelInfo, "m", at, slog.String(s+"k", s))
	}
	add("no attributes", slog.LevelInfo, "hello", at)
	add("zero time", slog.LevelInfo, "hello", time.Time{}, slog.Int("n", 1))
	add("monotonic clock", slog.LevelInfo, "hello", time.Now())
	add("other zone", slog.LevelInfo, "hello", at.In(zone))
	add("whole second", slog.LevelInfo, "hello", time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	add("nanoseconds", slog.LevelInfo, "hello", time.Date(2026, 1, 2, 3, 4, 5, 1, time.UTC))
	add("year out of range", slog.LevelInfo, "hello", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC))
	add("warning", slog.LevelWarn, "careful", at)
	add("error", slog.LevelError, "failed", at, slog.Any("error", errors.New("boom \"x\"")))
	add("level between", slog.LevelInfo+2, "odd level", at)
	add("kinds", slog.LevelInfo, "kinds", at, slog.Int("neg", -42), slog.Uint64("big", 1<<63+5), slog.Bool("yes", true),
		slog.Bool("no", false), slog.Duration("took", 1500*time.Millisecond), slog.Int64("min", -1<<63))
	add("float", slog.LevelInfo, "f", at, slog.Float64("x", 0.1))
	add("time value", slog.LevelInfo, "t", at, slog.Time("then", at))
	add("any", slog.LevelInfo, "a", at, slog.Any("list", []int{1, 2}))
	add("named group", slog.LevelInfo, "g", at, slog.Group("g", slog.Int("a", 1)))
	add("empty group", slog.LevelInfo, "g", at, slog.Attr{Value: slog.GroupValue()}, slog.Int("after", 1))
	add("nested inline groups", slog.LevelInfo, "g", at, slog.Attr{Value: slog.GroupValue(slog.Attr{Value: slog.GroupValue(slog.Int("a", 1))})})
	add("empty key", slog.LevelInfo, "k", at, slog.String("", "v"))
	add("empty attribute", slog.LevelInfo, "k", at, slog.Attr{}, slog.Int("after", 1))
	add("duplicate keys", slog.LevelInfo, "d", at, slog.Int("a", 1), slog.Int("a", 2))
	add("many attributes", slog.LevelInfo, "many", at, slog.Int("a", 1), slog.Int("b", 2), slog.Int("c", 3), slog.Int("d", 4),
		slog.Int("e", 5), slog.Int("f", 6), slog.String("g", "seven"))
	for _, c := range recs {
		t.Run(c.name, func(t *testing.T) {
			var want, got bytes.Buffer
			slog.NewJSONHandler(&want, nil).Handle(context.Background(), c.r)
			if err := newJSONLogHandler(&got).Handle(context.Background(), c.r); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Errorf("got  %s\nwant %s", got.String(), want.String())
			}
			if _, ok := appendJSONRecord(nil, c.r); !ok && (strings.HasPrefix(c.name, "access line") || c.name == "kinds") {
				t.Errorf("handed over to slog; want it encoded here")
			}
		})
	}
}

// TestJSONLogHandlerDerived: loggers derived With attributes or a group,
// and levels below info, behave as on slog's handler.
func TestJSONLogHandlerDerived(t *testing.T) {
	var want, got bytes.Buffer
	for _, l := range []*slog.Logger{slog.New(slog.NewJSONHandler(&want, nil)), slog.New(newJSONLogHandler(&got))} {
		l.Debug("hidden")
		l.With("component", "judge").Info("derived", "n", 1)
		l.WithGroup("g").Info("grouped", "n", 2)
		l.Info("plain", "n", 3)
	}
	strip := func(s string) string { // the times differ
		var out []string
		for _, line := range strings.Split(s, "\n") {
			if _, rest, ok := strings.Cut(line, `","level"`); ok {
				line = rest
			}
			out = append(out, line)
		}
		return strings.Join(out, "\n")
	}
	if strip(got.String()) != strip(want.String()) {
		t.Errorf("got  %s\nwant %s", got.String(), want.String())
	}
}

// FuzzJSONLogHandler compares the two handlers on an access line with
// any path and remote address.
func FuzzJSONLogHandler(f *testing.F) {
	for _, s := range oddStrings {
		f.Add(s, s)
	}
	at := time.Date(2026, 11, 26, 6, 30, 1, 234500000, time.UTC)
	f.Fuzz(func(t *testing.T, path, remote string) {
		var want, got bytes.Buffer
		r := accessRecord(at, path, remote)
		slog.NewJSONHandler(&want, nil).Handle(context.Background(), r)
		newJSONLogHandler(&got).Handle(context.Background(), r)
		if got.String() != want.String() {
			t.Errorf("got  %s\nwant %s", got.String(), want.String())
		}
	})
}

// BenchmarkJSONLogHandler writes an access line with slog's JSONHandler
// and with jsonLogHandler, to io.Discard.
func BenchmarkJSONLogHandler(b *testing.B) {
	r := accessRecord(time.Now(), "/api/v1/evaluations", "127.0.0.1")
	for _, h := range []struct {
		name string
		h    slog.Handler
	}{{"slog", slog.NewJSONHandler(io.Discard, nil)}, {"own", newJSONLogHandler(io.Discard)}} {
		b.Run(h.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				h.h.Handle(context.Background(), r)
			}
		})
	}
}

// TestPlain8: every byte value at every position of a word, and two odd
// bytes in one word.
func TestPlain8(t *testing.T) {
	plain := func(c byte) bool { return c >= 0x20 && c < 0x80 && c != '"' && c != '\\' }
	for c := range 256 {
		for p := range 8 {
			w := []byte("abcdefgh")
			w[p] = byte(c)
			if got, want := plain8(string(w)), plain(byte(c)); got != want {
				t.Errorf("plain8(%q) = %v; want %v", w, got, want)
			}
			for q := range 8 {
				w2 := []byte("        ")
				w2[p], w2[q] = byte(c), 0x1f
				if plain8(string(w2)) {
					t.Errorf("plain8(%q) = true; want false", w2)
				}
			}
		}
	}
}

// TestJSONLogHandlerAccessLines: the API's access lines, for a listing, a
// page not found and a path with characters JSON escapes, are the lines
// slog's JSONHandler writes (their times and durations aside).
func TestJSONLogHandlerAccessLines(t *testing.T) {
	store := sqlitetest.Open(t)
	paths := []string{"/api/v1/evaluations", "/api/v1/evaluations?status=all", "/no/such/page",
		"/api/v1/evaluations/%22quoted%22%5C%0A%E2%80%A8%FF", "/claim/s3cret-token"}
	var lines [2][]string
	for i, h := range []func(io.Writer) slog.Handler{
		func(w io.Writer) slog.Handler { return slog.NewJSONHandler(w, nil) },
		func(w io.Writer) slog.Handler { return newJSONLogHandler(w) },
	} {
		var buf bytes.Buffer
		srv := api.NewServer(api.Config{Catalog: registry.NewCatalog(store), Logger: slog.New(h(&buf))})
		for _, p := range paths {
			req := httptest.NewRequest(http.MethodGet, p, nil)
			req.Header.Set("X-Request-Id", "req-0123456789")
			req.Header.Set("User-Agent", "odd \"agent\" <x>\t\u2028")
			srv.ServeHTTP(httptest.NewRecorder(), req)
		}
		for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
			line = regexp.MustCompile(`"time":"[^"]*"`).ReplaceAllString(line, `"time":"T"`)
			line = regexp.MustCompile(`"duration_us":\d+`).ReplaceAllString(line, `"duration_us":0`)
			lines[i] = append(lines[i], line)
		}
	}
	if len(lines[0]) < len(paths) {
		t.Fatalf("slog wrote %d lines for %d requests", len(lines[0]), len(paths))
	}
	if strings.Join(lines[1], "\n") != strings.Join(lines[0], "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(lines[1], "\n"), strings.Join(lines[0], "\n"))
	}
}

// TestAppendTime: times written as RFC3339Nano writes them, across
// seconds, zones and fractions, each twice (the second from the kept
// second).
func TestAppendTime(t *testing.T) {
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("east", 5*3600+30*60), time.FixedZone("west", -8*3600),
		time.FixedZone("odd", 9*60+21)}
	base := time.Date(2026, 11, 26, 6, 59, 59, 0, time.UTC)
	for _, loc := range zones {
		for _, d := range []time.Duration{0, 1, 10, 123456789, 999999999, time.Second, time.Second + 500*time.Millisecond,
			-time.Nanosecond, -200 * 24 * time.Hour * 365} {
			at := base.Add(d).In(loc)
			for range 2 {
				if got, want := string(appendTime(nil, at)), at.Format(time.RFC3339Nano); got != want {
					t.Errorf("appendTime(%v) = %s; want %s", at, got, want)
				}
			}
		}
	}
}

// FuzzAppendTime compares appendTime with RFC3339Nano on any time of years
// 0 to 9999 in any whole-minute or odd zone.
func FuzzAppendTime(f *testing.F) {
	f.Add(int64(1795000000), int64(123000000), 0)
	f.Add(int64(-62135596800), int64(0), 3600)
	f.Fuzz(func(t *testing.T, sec, nsec int64, offset int) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(18*3600)))
		if y := at.Year(); y < 0 || y > 9999 {
			return
		}
		if got, want := string(appendTime(nil, at)), at.Format(time.RFC3339Nano); got != want {
			t.Errorf("appendTime(%v) = %s; want %s", at, got, want)
		}
	})
}

// FuzzJSONLogRecord compares the two handlers on any message, key, string,
// integer and time (in any zone, years 0 to 9999 and beyond), with the
// value as a string, an integer, a boolean, a duration or a float (handed
// over), at the top or in a group without a key.
func FuzzJSONLogRecord(f *testing.F) {
	for i, s := range oddStrings {
		f.Add(s, s+"k", s, int64(i)-3, int64(1795000000+i), int64(i*123456789), i*1800, uint8(i))
	}
	f.Add("m", "k", "v", int64(0), int64(-62167219200), int64(999999999), -1, uint8(0)) // year 0
	f.Add("m", "k", "v", int64(0), int64(253402300799), int64(999999999), 59, uint8(1)) // 9999-12-31T23:59:59
	f.Add("m", "k", "v", int64(0), int64(253402300800), int64(0), 0, uint8(2))          // year 10000
	f.Add("m", "k", "v", int64(0), int64(-62167219201), int64(1), 0, uint8(3))          // year -1
	f.Add("m", "", "v", int64(0), int64(1795000000), int64(0), 0, uint8(4))             // empty key
	f.Add("m", "k", "", int64(-1<<63), int64(0), int64(0), 0, uint8(5))                 // the epoch
	f.Fuzz(func(t *testing.T, msg, key, s string, n, sec, nsec int64, offset int, kind uint8) {
		at := time.Unix(sec, nsec).In(time.FixedZone("z", offset%(18*3600)))
		var v slog.Value
		switch kind % 5 {
		case 0:
			v = slog.StringValue(s)
		case 1:
			v = slog.Int64Value(n)
		case 2:
			v = slog.BoolValue(n&1 == 1)
		case 3:
			v = slog.DurationValue(time.Duration(n))
		case 4:
			v = slog.Float64Value(float64(n) / 7)
		}
		r := slog.NewRecord(at, slog.Level(n%13), msg, 0)
		a := slog.Attr{Key: key, Value: v}
		if kind&8 != 0 {
			a = slog.Attr{Value: slog.GroupValue(slog.String("before", s), a)}
		}
		r.AddAttrs(a, slog.String(s, key))
		var want, got bytes.Buffer
		slog.NewJSONHandler(&want, nil).Handle(context.Background(), r)
		if err := newJSONLogHandler(&got).Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Errorf("got  %s\nwant %s", got.String(), want.String())
		}
	})
}

// TestJSONLogHandlerConcurrent: lines encoded here and lines handed to
// slog's handler, written from many goroutines at once, never interleave
// (each written line is one whole JSON object).
func TestJSONLogHandlerConcurrent(t *testing.T) {
	var out bytes.Buffer // written only under the handler's lock
	l := slog.New(newJSONLogHandler(&out))
	at := time.Date(2026, 11, 26, 23, 59, 59, 999999999, time.UTC)
	const goroutines, lines = 8, 300
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			h := l.Handler()
			for i := range lines {
				switch i % 4 {
				case 0: // encoded here, across a second (and a day) boundary
					h.Handle(context.Background(), accessRecord(at.Add(time.Duration(i)*time.Nanosecond), strings.Repeat("p", g*100+i), "r"))
				case 1: // handed over
					l.Info("float", "x", float64(i)/3, "g", g)
				case 2: // derived: slog's handler, through the same lock
					l.With("g", g).Info("derived", "error", errors.New(strings.Repeat("e", i)))
				case 3:
					l.Info("plain", "i", i, "g", g)
				}
			}
		})
	}
	wg.Wait()
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != goroutines*lines {
		t.Fatalf("got %d lines; want %d", len(got), goroutines*lines)
	}
	for i, line := range got {
		if !json.Valid([]byte(line)) {
			t.Fatalf("line %d is not one JSON object: %.200s", i, line)
		}
	}
}
