package main

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// jsonLogHandler writes records as slog's JSONHandler (default options)
// does, byte for byte, and faster for the records a server writes most,
// the access lines: a record whose attributes are strings, integers,
// booleans and durations with keys, or groups without a key (written
// inline) of those, is encoded here in one pass; anything else (errors,
// floats, times, values that resolve themselves, nested groups, a logger
// derived With attributes or a group) goes to slog's own handler. Both
// write through one mutex, so lines never interleave.
type jsonLogHandler struct {
	mu   *sync.Mutex
	w    io.Writer
	slow slog.Handler
}

func newJSONLogHandler(w io.Writer) *jsonLogHandler {
	mu := &sync.Mutex{}
	return &jsonLogHandler{mu: mu, w: w, slow: slog.NewJSONHandler(lockedWriter{mu, w}, nil)}
}

// lockedWriter writes under mu.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (h *jsonLogHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.slow.Enabled(ctx, level)
}

func (h *jsonLogHandler) WithAttrs(attrs []slog.Attr) slog.Handler { return h.slow.WithAttrs(attrs) }
func (h *jsonLogHandler) WithGroup(name string) slog.Handler       { return h.slow.WithGroup(name) }

var jsonLogBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func (h *jsonLogHandler) Handle(ctx context.Context, r slog.Record) error {
	bp := jsonLogBuffers.Get().(*[]byte)
	defer func() {
		if cap(*bp) <= 16<<10 {
			*bp = (*bp)[:0]
			jsonLogBuffers.Put(bp)
		}
	}()
	b, ok := appendJSONRecord((*bp)[:0], r)
	*bp = b
	if !ok {
		return h.slow.Handle(ctx, r)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	_, err := h.w.Write(b)
	return err
}

// appendJSONRecord appends r's line to b as slog's JSONHandler writes it;
// false when r holds something only that handler encodes.
func appendJSONRecord(b []byte, r slog.Record) ([]byte, bool) {
	b = append(b, '{')
	if !r.Time.IsZero() {
		t := r.Time.Round(0)
		if y := t.Year(); y < 0 || y >= 10000 {
			return b, false // slog writes an error in the line
		}
		b = append(b, `"time":"`...)
		b = appendTime(b, t)
		b = append(b, `",`...)
	}
	b = append(b, `"level":`...)
	b = appendJSONString(b, r.Level.String())
	b = append(b, `,"msg":`...)
	b = appendJSONString(b, r.Message)
	ok := true
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendJSONAttr(b, a, true)
		return ok
	})
	if !ok {
		return b, false
	}
	return append(b, '}', '\n'), true
}

// secondText is a second's time as RFC 3339 writes it, in one location:
// the date and time to the second, and the zone. It is never modified.
type secondText struct {
	unix   int64
	loc    *time.Location
	prefix [19]byte // 2006-01-02T15:04:05 (the year has four digits)
	zone   string   // Z or ±hh:mm
}

// lastSecond is the second of the last line; lines come in order, so
// most share it.
var lastSecond atomic.Pointer[secondText]

// appendTime appends t as t.AppendFormat(b, time.RFC3339Nano) does, the
// date, time and zone kept for the second; t's year is in [0, 9999].
func appendTime(b []byte, t time.Time) []byte {
	unix, loc := t.Unix(), t.Location()
	st := lastSecond.Load()
	if st == nil || st.unix != unix || st.loc != loc {
		text := t.Truncate(time.Second).AppendFormat(nil, time.RFC3339)
		st = &secondText{unix: unix, loc: loc, zone: string(text[19:])}
		copy(st.prefix[:], text)
		lastSecond.Store(st)
	}
	b = append(b, st.prefix[:]...)
	if ns := t.Nanosecond(); ns != 0 { // nine digits, trailing zeros left out
		var frac [10]byte
		frac[0] = '.'
		for i := 9; i >= 1; i-- {
			frac[i] = byte('0' + ns%10)
			ns /= 10
		}
		n := 10
		for frac[n-1] == '0' {
			n--
		}
		b = append(b, frac[:n]...)
	}
	return append(b, st.zone...)
}

// appendJSONAttr appends `,"key":value`; false for what it does not
// encode. A group without a key is written inline, at the top level only.
func appendJSONAttr(b []byte, a slog.Attr, top bool) ([]byte, bool) {
	v := a.Value
	if v.Kind() == slog.KindGroup {
		if a.Key != "" || !top {
			return b, false
		}
		for _, m := range v.Group() {
			var ok bool
			if b, ok = appendJSONAttr(b, m, false); !ok {
				return b, false
			}
		}
		return b, true
	}
	if a.Key == "" {
		return b, false // slog leaves out an empty attribute, keeps an empty key otherwise
	}
	b = append(b, ',')
	b = appendJSONString(b, a.Key)
	b = append(b, ':')
	switch v.Kind() {
	case slog.KindString:
		b = appendJSONString(b, v.String())
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindDuration:
		b = strconv.AppendInt(b, int64(v.Duration()), 10)
	default:
		return b, false
	}
	return b, true
}

// appendJSONString appends s quoted and escaped as slog's JSONHandler
// does: '"', '\\' and control characters escaped, invalid UTF-8 as
// \ufffd, U+2028 and U+2029 escaped, HTML characters left as they are.
func appendJSONString(b []byte, s string) []byte {
	b = append(b, '"')
	i := 0 // s[:i] needs no escaping: a word at a time, then a byte
	for i+8 <= len(s) && plain8(s[i:i+8]) {
		i += 8
	}
	for i < len(s) && plainByte[s[i]] {
		i++
	}
	if i == len(s) {
		b = append(b, s...)
		return append(b, '"')
	}
	start := 0
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if plainByte[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// plainByte holds the bytes JSON keeps as they are in a string: ASCII but
// control characters, '"' and '\\'. (Bytes above 0x7f are UTF-8, checked
// apart.)
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// plain8 reports whether the 8 bytes of s are ASCII that JSON keeps as it
// is: none a control character, '"', '\\' or above 0x7f (tested a word at
// a time).
func plain8(s string) bool {
	x := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (x - 0x20*ones) // a byte below 0x20 borrows into its high bit
	quote := x ^ '"'*ones    // a '"' becomes zero
	slash := x ^ '\\'*ones   // so does a '\\'
	special := below | (quote-ones)&^quote | (slash-ones)&^slash
	return (special|x)&highs == 0
}
