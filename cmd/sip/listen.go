package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	neturl "net/url"
	"strings"
	"syscall"
	"time"

	"github.com/sipregistry/sip/registry/evaluation"
	"github.com/sipregistry/sip/registry/judge"
	"github.com/sipregistry/sip/registry/metric"
)

// listen binds the server's address. sip serve does it before it touches
// the database, so a taken port fails at once and leaves no database
// behind; the error names the setting to change.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err == nil {
		return ln, nil
	}
	hint := "choose another address with --addr or SIP_ADDR (make run: ADDR=127.0.0.1:8081 make run)"
	if errors.Is(err, syscall.EADDRINUSE) {
		hint = "another process uses it; " + hint
	}
	return nil, fmt.Errorf("%w on %s: %v; %s", errListen, addr, err, hint)
}

// errBaseURL: the public URL is missing where it is needed, or malformed.
var errBaseURL = errors.New("SIP_BASE_URL")

// checkBaseURL refuses a server that listens beyond this machine without
// SIP_BASE_URL: its credentials would name an issuer nobody can resolve
// (did:web:[::]…) and its claim links would point at the listening
// address. On a loopback address the listening URL is the public one.
func checkBaseURL(addr, base string) error {
	if base == "" {
		if isLoopback(addr) {
			return nil
		}
		return fmt.Errorf("%w is not set, and %s is not a loopback address: set SIP_BASE_URL to the URL agents and browsers reach this server at (e.g. https://sip.example.org), or listen on 127.0.0.1", errBaseURL, addr)
	}
	u, err := neturl.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return fmt.Errorf("%w %q: want an absolute http(s) URL without query, fragment or user, e.g. https://sip.example.org", errBaseURL, base)
	}
	return nil
}

// errDevClaims: --dev-claims on a server others can reach.
var errDevClaims = errors.New("--dev-claims")

// checkDevClaims refuses claims without X on anything but a development
// server: one that listens on loopback, whose SIP_BASE_URL (if any) is a
// loopback URL, and that runs no GitHub App. Anyone who reaches a public
// registry could otherwise claim agents for owners of their choosing.
func (m *Main) checkDevClaims() error {
	if !m.DevClaims {
		return nil
	}
	if !isLoopback(m.Addr) {
		return fmt.Errorf("%w: %s is not a loopback address; claims without X are for a registry on this machine only", errDevClaims, m.Addr)
	}
	if m.BaseURL != "" {
		u, err := neturl.Parse(m.BaseURL)
		if err != nil || !isLoopback(net.JoinHostPort(u.Hostname(), "0")) {
			return fmt.Errorf("%w: SIP_BASE_URL %q is not a loopback URL; claims without X are for a registry on this machine only", errDevClaims, m.BaseURL)
		}
	}
	if m.GitHub != nil {
		return fmt.Errorf("%w: the GitHub App is on; a registry that governs a repository claims agents through X only", errDevClaims)
	}
	return nil
}

// isLoopback says whether addr (host:port) listens only on this machine.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// logJudge says at start which judge grades, so an operator sees a wrong
// URL or model before the first job waits on it. The URL is logged without
// credentials or query; the API key never.
func logJudge(log *slog.Logger, j *judge.Client, outageWindow time.Duration) {
	if j == nil {
		log.Info("no judge configured (SIP_JUDGE_URL): certifications and free-response answers wait for one")
		return
	}
	shown := "(unparseable URL)"
	if u, err := neturl.Parse(j.URL); err == nil {
		u.User, u.RawQuery, u.Fragment = nil, "", ""
		shown = u.String()
	}
	log.Info("judge", "url", shown, "model", j.Model, "api_key_set", j.APIKey != "", "outage_window", outageWindow.String())
}

// judgeStatus is the /readyz detail of the judge, from what the worker
// last saw of it.
func judgeStatus(w *evaluation.Worker) func() string {
	return func() string {
		h := w.Health()
		switch {
		case !h.Configured:
			return "not configured"
		case h.Up:
			return "ok"
		}
		return fmt.Sprintf("down since %s: %s", h.Since.UTC().Format(time.RFC3339), evaluation.ExplainJudgeError(h.LastError))
	}
}

// judgeCollector is the judge's metrics: whether it answers, and the
// calls that found it down, by kind, read from the worker when scraped.
func judgeCollector(w *evaluation.Worker) metric.Collector {
	up := metric.NewGaugeDesc("sip_judge_up",
		"1 while the judge answers (or no call failed yet), 0 while it is down; absent without a judge.")
	outages := metric.NewCounterDesc("sip_judge_outage_calls_total",
		"Judge calls that found the judge down, by kind (unreachable, timeout, unavailable: 429 or 5xx).", "kind")
	bad := metric.NewCounterDesc("sip_judge_bad_answers_total",
		"Judge answers that were unusable (not the required JSON object, or a 4xx).")
	return metric.CollectorFunc(func(_ context.Context, s *metric.Scrape) {
		h := w.Health()
		answers := 0.0
		if h.Up {
			answers = 1
		}
		s.Value(up, answers)
		for _, kind := range []string{"unreachable", "timeout", "unavailable"} {
			s.Value(outages, float64(h.Outages[kind]), kind)
		}
		s.Value(bad, float64(h.BadAnswers))
	})
}
