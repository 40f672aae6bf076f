// Command readbench measures the read API as a black box: `sip serve` and
// this load generator run as separate processes, and so does the floor, a
// bare echo server returning the same bytes. For each number of
// evaluations it generates the SIPs, starts `sip serve` on each store
// (syncing them at start), fetches GET /api/v1/evaluations once, starts
// the floor with that body, then loads floor and stores in turn, rounds
// times, with 16 keep-alive connections. It reports requests per second,
// p50 and p99 latency, and the server's CPU time per request (from
// /proc/PID/stat: on a loaded machine it varies far less than throughput),
// each with its ratio to the floor of the same round. At the end it sums
// up each size and server: the median over the rounds of both ratios, and
// whether the median requests per second reach the target, 0.9× the floor.
//
//	go build -o bin/sip ./cmd/sip
//	go run ./api/apitest/readbench -sip bin/sip -sizes 10,50,1000
//
// -sip takes several binaries, comma-separated (say, before and after a
// change): each is started on each store and measured in the same rounds,
// named by its position (sqlite, sqlite.2, …).
//
// PostgreSQL runs on a new database made for the run (and dropped after)
// on the server -pg names (SIP_TEST_DATABASE_URL, else the local one),
// unless -pg is empty.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/labstack/echo/v4"

	"github.com/sipregistry/sip/registry/siptest"
)

func main() {
	if len(os.Args) == 4 && os.Args[1] == "floor" {
		floor(os.Args[2], os.Args[3])
		return
	}
	sip := flag.String("sip", "bin/sip", "the sip binary, or several, comma-separated")
	sizes := flag.String("sizes", "10,50,1000", "numbers of evaluations, comma-separated")
	pgDefault := os.Getenv("SIP_TEST_DATABASE_URL")
	if pgDefault == "" {
		pgDefault = "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	}
	pg := flag.String("pg", pgDefault, "PostgreSQL server to make a database on (default SIP_TEST_DATABASE_URL, else the local one; empty: SQLite only)")
	conns := flag.Int("c", 16, "connections")
	d := flag.Duration("d", 3*time.Second, "duration of one measurement")
	rounds := flag.Int("rounds", 3, "rounds: floor and each store, in turn")
	flag.Parse()
	self, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "readbench")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	fmt.Printf("readbench %s: %d connections, %s per measurement, %d rounds\n", time.Now().UTC().Format(time.RFC3339), *conns, *d, *rounds)
	fmt.Printf("%-6s %-10s %10s %8s %8s %12s %9s %9s\n", "SIPs", "server", "req/s", "p50 ms", "p99 ms", "CPU µs/req", "req/s ×", "CPU ×")
	var sums []summary
	for _, f := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			log.Fatalf("bad size %q", f)
		}
		dir := filepath.Join(tmp, "sips-"+strconv.Itoa(n))
		if err := writeSIPs(dir, n); err != nil {
			log.Fatal(err)
		}
		stores, bins := map[string]string{}, map[string]string{}
		var order []string
		for i, bin := range strings.Split(*sip, ",") {
			suffix := ""
			if i > 0 {
				suffix = "." + strconv.Itoa(i+1)
			}
			stores["sqlite"+suffix] = "sqlite:" + filepath.Join(tmp, fmt.Sprintf("registry-%d%s.db", n, suffix))
			bins["sqlite"+suffix] = bin
			order = append(order, "sqlite"+suffix)
			if *pg != "" {
				url, drop, err := newDatabase(*pg, fmt.Sprintf("readbench_%d_%d_%d", os.Getpid(), n, i))
				if err != nil {
					log.Fatal(err)
				}
				defer drop()
				stores["postgres"+suffix] = url
				bins["postgres"+suffix] = bin
				order = append(order, "postgres"+suffix)
			}
		}
		servers := map[string]*server{}
		var body []byte
		for _, name := range order {
			s, err := start(bins[name], "serve", "--db", stores[name], "--evaluations", dir, "--addr", "127.0.0.1:0")
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			defer s.stop()
			servers[name] = s
			b, err := get(s.url + "/api/v1/evaluations")
			if err != nil {
				log.Fatalf("%s: %v", name, err)
			}
			if body == nil {
				body = b
			} else if !bytes.Equal(b, body) {
				log.Fatalf("%s answers differently from %s", name, order[0])
			}
		}
		bodyFile := filepath.Join(tmp, "body.json")
		if err := os.WriteFile(bodyFile, body, 0o644); err != nil {
			log.Fatal(err)
		}
		fl, err := start(self, "floor", bodyFile, "127.0.0.1:0")
		if err != nil {
			log.Fatal(err)
		}
		defer fl.stop()
		servers["floor"] = fl
		first := len(sums)
		for _, name := range order {
			sums = append(sums, summary{sips: n, server: name})
		}
		for r := 0; r < *rounds; r++ {
			var f result
			for i, name := range append([]string{"floor"}, order...) {
				res := measure(servers[name], *conns, *d)
				if name == "floor" {
					f = res
				}
				rps, cpu := res.rps/f.rps, f.cpuPerReq/res.cpuPerReq
				fmt.Printf("%-6d %-10s %10.0f %8.2f %8.2f %12.1f %9.2f %9.2f\n", n, name, res.rps, ms(res.p50), ms(res.p99),
					res.cpuPerReq, rps, cpu)
				if i > 0 {
					sums[first+i-1].add(rps, cpu)
				}
			}
		}
		for _, s := range servers {
			s.stop()
		}
	}
	fmt.Printf("\nmedian of %d rounds; target: req/s × ≥ %.1f\n", *rounds, target)
	fmt.Printf("%-6s %-10s %9s %9s  %s\n", "SIPs", "server", "req/s ×", "CPU ×", "target")
	for _, s := range sums {
		fmt.Println(s)
	}
}

// target is the read API's goal: its requests per second at least this
// share of the floor's.
const target = 0.9

// summary is one server's ratios to the floor at one size, a value per
// round.
type summary struct {
	sips     int
	server   string
	rps, cpu []float64
}

func (s *summary) add(rps, cpu float64) {
	s.rps = append(s.rps, rps)
	s.cpu = append(s.cpu, cpu)
}

func (s summary) String() string {
	rps := median(s.rps)
	verdict := "no"
	if rps >= target {
		verdict = "met"
	}
	return fmt.Sprintf("%-6d %-10s %9.2f %9.2f  %s", s.sips, s.server, rps, median(s.cpu), verdict)
}

// median is the middle value of vs, or the mean of the middle two.
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return 0
	}
	v := slices.Sorted(slices.Values(vs))
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func writeSIPs(dir string, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range siptest.Generate(n, 1) {
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f.Path)), f.Content, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// newDatabase makes an empty database on the server at admin.
func newDatabase(admin, name string) (string, func(), error) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		return "", nil, err
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		return "", nil, err
	}
	u, err := url.Parse(admin) // the same server and credentials, the new database
	if err != nil {
		return "", nil, err
	}
	u.Path = "/" + name
	return u.String(), func() {
		c, err := pgx.Connect(ctx, admin)
		if err == nil {
			c.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			c.Close(ctx)
		}
	}, nil
}

// server is a process serving HTTP.
type server struct {
	cmd *exec.Cmd
	url string
}

// start runs a server that listens on 127.0.0.1:0 and waits until it
// answers; the address is found from the process's listening socket.
func start(bin string, args ...string) (*server, error) {
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard // the access log is written, as in production, then dropped
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	s := &server{cmd: cmd}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if addr := listening(cmd.Process.Pid); addr != "" {
			s.url = "http://" + addr
			if _, err := get(s.url + "/api/v1/evaluations"); err == nil {
				return s, nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	s.stop()
	return nil, fmt.Errorf("%s did not start serving", bin)
}

func (s *server) stop() {
	if s.cmd.ProcessState == nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
	}
}

// listening is the 127.0.0.1 address process pid listens on, read from
// /proc (its sockets' inodes matched against /proc/net/tcp).
func listening(pid int) string {
	fds, _ := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	inodes := map[string]bool{}
	for _, fd := range fds {
		if l, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/%s", pid, fd.Name())); err == nil && strings.HasPrefix(l, "socket:[") {
			inodes[strings.TrimSuffix(strings.TrimPrefix(l, "socket:["), "]")] = true
		}
	}
	tcp, _ := os.ReadFile("/proc/net/tcp")
	for _, line := range strings.Split(string(tcp), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) < 10 || f[3] != "0A" || !inodes[f[9]] { // 0A: LISTEN
			continue
		}
		host, port, _ := strings.Cut(f[1], ":")
		if host != "0100007F" {
			continue
		}
		p, _ := strconv.ParseUint(port, 16, 16)
		return net.JoinHostPort("127.0.0.1", strconv.FormatUint(p, 10))
	}
	return ""
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("%s: %s", url, resp.Status)
	}
	return b, err
}

// cpuTicks is the CPU time (user and system) process pid used so far, in
// clock ticks.
func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	_, rest, _ := strings.Cut(string(b), ") ") // the command may hold spaces
	f := strings.Fields(rest)
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

const ticksPerSecond = 100 // USER_HZ on Linux

type result struct {
	rps       float64
	p50, p99  time.Duration
	cpuPerReq float64 // µs
}

// measure loads url with conns keep-alive connections for d.
func measure(s *server, conns int, d time.Duration) result {
	url := s.url + "/api/v1/evaluations"
	var stop atomic.Bool
	var mu sync.Mutex
	var all []time.Duration
	var wg sync.WaitGroup
	cpu0 := cpuTicks(s.cmd.Process.Pid)
	begin := time.Now()
	for range conns {
		wg.Go(func() {
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
			var mine []time.Duration
			for !stop.Load() {
				t := time.Now()
				resp, err := client.Get(url)
				if err != nil {
					log.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					log.Fatalf("%s: %s", url, resp.Status)
				}
				mine = append(mine, time.Since(t))
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(begin)
	cpu := cpuTicks(s.cmd.Process.Pid) - cpu0
	slices.Sort(all)
	return result{rps: float64(len(all)) / elapsed.Seconds(), p50: all[len(all)/2], p99: all[len(all)*99/100],
		cpuPerReq: float64(cpu) * 1e6 / ticksPerSecond / float64(len(all))}
}

// floor serves the body in file at addr: a bare echo handler, as the API
// uses echo, returning the bytes of the API's answer.
func floor(file, addr string) {
	body, err := os.ReadFile(file)
	if err != nil {
		log.Fatal(err)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.GET("/api/v1/evaluations", func(c echo.Context) error { return c.JSONBlob(http.StatusOK, body) })
	log.Fatal(e.Start(addr))
}
