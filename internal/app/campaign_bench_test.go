package app

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/user"
)

// TestCampaign100k uploads campaigns of 10,000 and 100,000 recipients
// through the management API and reports the time, the peak heap while
// each upload ran and the process's peak RSS, then checks the charge to the
// micro-credit: the balance moved by exactly the sum of the messages'
// charges, which is the recipients times the price. It runs only when
// MSGSVC_CAMPAIGN_100K is set (docs/benchmarks.md):
//
//	MSGSVC_CAMPAIGN_100K=1 go test -count=1 -run TestCampaign100k -v ./internal/app/
func TestCampaign100k(t *testing.T) {
	if os.Getenv("MSGSVC_CAMPAIGN_100K") == "" {
		t.Skip("set MSGSVC_CAMPAIGN_100K=1 to upload campaigns of 10,000 and 100,000 recipients")
	}
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{credits: 300_000})
		dev := e.member(user.Developer)
		sizes := []int{10_000, 100_000}
		if n, err := strconv.Atoi(os.Getenv("MSGSVC_CAMPAIGN_100K")); err == nil && n > 1 {
			sizes = []int{n} // one upload of this many recipients
		}
		for _, n := range sizes {
			before := e.balanceOf(e.account.ID)
			runtime.GC()
			var base runtime.MemStats
			runtime.ReadMemStats(&base)
			rss0 := rss()
			var peak, peakSys, peakRSS atomic.Uint64
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				var ms runtime.MemStats
				tick := time.NewTicker(5 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						runtime.ReadMemStats(&ms)
						if ms.HeapInuse > peak.Load() {
							peak.Store(ms.HeapInuse)
						}
						if ms.Sys > peakSys.Load() {
							peakSys.Store(ms.Sys)
						}
						if r := rss(); r > peakRSS.Load() {
							peakRSS.Store(r)
						}
					}
				}
			}()
			start := time.Now()
			r := e.uploadCampaign(dev, "", generatedCSV(n), map[string]string{"text": "Hi {{name}}, your code is {{code}}.", "type": "SMS",
				// Scheduled, so that the dispatcher stays idle: the figures are
				// the upload's alone, and no message is refunded meanwhile.
				"scheduledAt": e.clock.Now().Add(time.Hour).UTC().Format(time.RFC3339)})
			took := time.Since(start)
			close(stop)
			wg.Wait()
			if r.status != 202 {
				t.Fatalf("%d recipients: %d %s", n, r.status, r.body)
			}
			cid := r.json(t)["campaignId"].(string)
			var sum int64
			msgs := e.campaignMessages(e.account.ID, cid)
			for _, m := range msgs {
				sum += m.Charged
			}
			moved := before - e.balanceOf(e.account.ID)
			ledger, err := e.st.LedgerSum(context.Background(), e.account.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(msgs) != n || moved != sum || sum != int64(n)*1_000_000 || ledger != e.balanceOf(e.account.ID) {
				t.Fatalf("%d recipients: %d messages, balance moved %d, messages charged %d, want %d; ledger %d", n, len(msgs), moved, sum,
					int64(n)*1_000_000, ledger)
			}
			t.Logf("%s, %d recipients: %v (%.0f rows/s); heap in use %.1f MB before, peak %.1f MB during (Go runtime total %.0f MB); RSS %.0f MB before, peak %.0f MB during; charged %d credits = %d × 1, balance moved exactly that",
				d, n, took.Round(time.Millisecond), float64(n)/took.Seconds(), mb(base.HeapInuse), mb(peak.Load()), mb(peakSys.Load()), mb(rss0), mb(peakRSS.Load()), sum/1_000_000, n)
		}
	})
}

func mb(b uint64) float64 { return float64(b) / (1 << 20) }

// generatedCSV writes n rows as they are read, so that the client never
// holds the file either.
func generatedCSV(n int) io.Reader {
	pr, pw := io.Pipe()
	go func() {
		w := bufio.NewWriter(pw)
		fmt.Fprintln(w, "to,name,code")
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "55119%08d,Customer%d,%06d\n", i, i, i%1_000_000)
		}
		if err := w.Flush(); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.Close()
	}()
	return pr
}

// rss is the process's resident set now (Linux; 0 elsewhere).
func rss() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			f := strings.Fields(line)
			if kb, err := strconv.ParseUint(f[1], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
