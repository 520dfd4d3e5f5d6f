//go:build unix

package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/store"
)

// exportRowsEnv names how many messages TestExportMessagesAtScale seeds
// (e.g. 1000000); unset, the test is skipped: it is a measurement, not
// part of the default run.
const exportRowsEnv = "MSGSVC_EXPORT_ROWS"

// TestExportMessagesAtScale seeds an account with N messages straight
// through the store, exports them over HTTP as an operator, and reports
// the export's time, rows per second and the process's peak heap in use
// while it ran (sampled every 50 ms), against the heap before it. Figures
// in docs/benchmarks.md.
func TestExportMessagesAtScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv(exportRowsEnv))
	if n <= 0 {
		t.Skipf("a measurement: set %s to the number of messages to export (e.g. 1000000)", exportRowsEnv)
	}
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		start := e.clock.Now().Add(-time.Duration(n) * time.Millisecond)
		seedStart := time.Now()
		const perCampaign = 10000
		for done := 0; done < n; done += perCampaign {
			k := min(perCampaign, n-done)
			at := start.Add(time.Duration(done) * time.Millisecond)
			cmp := domain.Campaign{ID: id.New(id.Campaign, at), AccountID: e.account.ID, Env: domain.Live, Type: domain.SMS, Total: k, CreatedAt: at}
			ids := id.Sequence(id.Message, at, k)
			msgs := make([]domain.Message, k)
			for i := range msgs {
				created := at.Add(time.Duration(i) * time.Millisecond)
				msgs[i] = domain.Message{ID: ids[i], CampaignID: cmp.ID, AccountID: e.account.ID, Env: domain.Live,
					To: fmt.Sprintf("5511%09d", done+i), CountryCode: "55", Type: domain.SMS, Channel: domain.SMS, Body: "seeded",
					Status: domain.Delivered, Segments: 1, Encoding: "GSM-7", Credits: 1_000_000, Charged: 1_000_000,
					Reference: "ref-" + strconv.Itoa(done+i), CreatedAt: created, UpdatedAt: created, ExpiresAt: created.Add(48 * time.Hour)}
			}
			err := e.st.Write(ctx, func(tx *store.Tx) error {
				if err := tx.InsertCampaign(ctx, cmp); err != nil {
					return err
				}
				return tx.InsertMessages(ctx, msgs)
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("%s: seeded %d messages in %v", d, n, time.Since(seedStart).Round(time.Millisecond))

		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		var peak atomic.Uint64
		stop := make(chan struct{})
		sampled := make(chan struct{})
		go func() {
			defer close(sampled)
			var m runtime.MemStats
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for {
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
				select {
				case <-stop:
					return
				case <-tick.C:
				}
			}
		}()
		op := e.member("operator")
		req, err := http.NewRequest("GET", e.base+"/api/v1/manage/exports/messages.csv?account="+e.account.ID, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+op)
		cpuBefore := cpuTime(t)
		began := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var rows, bytes int
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			rows++
			bytes += len(sc.Bytes()) + 1
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		took := time.Since(began)
		cpu := cpuTime(t) - cpuBefore
		close(stop)
		<-sampled
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if err := sc.Err(); err != nil || resp.StatusCode != 200 || rows != n+1 {
			t.Fatalf("export: %d, %d lines (want %d), %v", resp.StatusCode, rows, n+1, err)
		}
		t.Logf("%s: exported %d messages (%.1f MB of CSV) in %v: %.0f rows/s; the process's CPU %v (%.1f µs a row, client and server); "+
			"heap in use %.1f MB before, peak %.1f MB during; %.0f MB allocated in all",
			d, n, float64(bytes)/1e6, took.Round(time.Millisecond), float64(n)/took.Seconds(), cpu.Round(time.Millisecond),
			float64(cpu.Microseconds())/float64(n), float64(before.HeapInuse)/1e6, float64(peak.Load())/1e6,
			float64(after.TotalAlloc-before.TotalAlloc)/1e6)
	})
}

// cpuTime is the CPU time (user and system) the process has used: on a
// machine shared with other work it tells what an export costs when the
// wall clock cannot.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
