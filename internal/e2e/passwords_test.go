package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Fifty concurrent wrong logins (each argon2id check takes 64 MiB) leave
// the process's peak memory bounded and its API answering: the checks are
// refused before hashing once their address or account has one running or
// is over its failure window, and the few that run share a small number of
// hashing slots. Before the bound, 31 such logins took a node to 2.9 GB
// and API latency to 3.6 s.
func TestWrongLoginsBoundMemory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dsn := filepath.Join(dir, "msgsvc.db")
	acct := bootstrap(ctx, t, dsn, "test")
	srv := startServer(ctx, t, dsn, filepath.Join(dir, "data"))
	client := &http.Client{Timeout: 30 * time.Second}
	balance := func() time.Duration {
		t.Helper()
		req, _ := http.NewRequest("GET", srv.URL+"/api/v1/integration/balance", nil)
		req.Header.Set("X-API-KEY", acct.Key)
		start := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("balance: %d", resp.StatusCode)
		}
		return time.Since(start)
	}
	balance() // the key is known at this address before its failures begin

	const logins = 50
	var wg sync.WaitGroup
	statuses := make([]int, logins)
	start := make(chan struct{})
	for i := range logins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			body := fmt.Sprintf(`{"email": "nobody%d@example.com", "password": "wrong horse battery %d"}`, i, i)
			resp, err := client.Post(srv.URL+"/api/v1/auth/login", "application/json", bytes.NewBufferString(body))
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			statuses[i] = resp.StatusCode
		}()
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	close(start)
	var lat []time.Duration
	for burst := true; burst || len(lat) == 0; {
		select {
		case <-done:
			burst = false
		default:
		}
		lat = append(lat, balance())
	}
	for _, s := range statuses {
		if s != http.StatusUnauthorized && s != http.StatusTooManyRequests {
			t.Fatalf("a wrong login answered %d (all: %v)", s, statuses)
		}
	}
	peak := peakRSS(t, srv.cmd.Process.Pid)
	slices.Sort(lat)
	median := lat[len(lat)/2]
	t.Logf("peak RSS %d MiB; %d API requests during the burst: median %v, slowest %v; statuses %v",
		peak>>20, len(lat), median, lat[len(lat)-1], statuses)
	if peak > 400<<20 {
		t.Errorf("peak RSS %d MiB, want under 400 MiB", peak>>20)
	}
	if median > 100*time.Millisecond {
		t.Errorf("API requests during the burst took %v (median), want under 100 ms", median)
	}
}

// peakRSS reads a process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				t.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}
