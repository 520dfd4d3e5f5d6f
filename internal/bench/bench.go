// Package bench is msgsvc's load generator: it sends N messages over C
// keep-alive connections to a msgsvc node (one it starts itself, or one
// already running), receives the webhooks itself, and reports throughput,
// latencies, the node's CPU time and memory, and any missing or duplicate
// events.
package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Options describe one run.
type Options struct {
	URL         string        // base URL of the node
	URLs        []string      // several nodes: requests are spread over them
	PIDs        []int         // the nodes' process ids
	Key         string        // API key (live keys exercise the ledger)
	N           int           // messages to send
	C           int           // concurrent connections
	Type        string        // SMS, WHATSAPP or RCS
	Text        string        // message text
	Wait        time.Duration // how long to wait for the last webhooks
	PID         int           // the node's process id, for CPU and memory (0: unknown)
	PeerPID     int           // a peer (an SMSC simulator) whose CPU is reported apart (0: none)
	CallbackTo  string        // address the webhook receiver listens on
	Timeout     time.Duration // bound on the send phase
	WantFinal   int           // statuses that end a message for this type
	Progress    io.Writer
	BatchSize   int // recipients per request (1: one message per request)
	ExtraFields map[string]any
	// NoCallback sends without a callbackUrl, the way an integrator who
	// reads the events feed sends. No webhooks come back, so Finished
	// tells how many messages have reached a final status.
	NoCallback bool
	Finished   func(ctx context.Context) (int, error)
	// DB, when set, measures the database server's CPU and lock waits
	// (a local PostgreSQL).
	DB DBProbe
	// Rate paces the requests (per second, over all connections); 0 sends
	// as fast as the connections allow.
	Rate float64
	// Front is the API the messages are sent through: "" or "native"
	// (JSON, X-API-KEY, delivery_status webhooks), or "twilio" (the
	// Twilio-compatible Messages.json with Basic auth, a From, and signed
	// form-encoded status callbacks).
	Front  string
	Twilio TwilioLogin
}

// TwilioLogin is what a Twilio front run sends with: an account SID, its
// auth token, and one of the account's approved numbers as From.
type TwilioLogin struct {
	AccountSid string
	AuthToken  string
	From       string // E.164
}

// Result is what a run measured.
type Result struct {
	Front               string  `json:"front"`
	Messages            int     `json:"messages"`
	Requests            int     `json:"requests"`
	Concurrency         int     `json:"concurrency"`
	Accepted            int     `json:"accepted"`
	Refused             int     `json:"refused"`
	SendSeconds         float64 `json:"sendSeconds"`
	AcceptedPerSec      float64 `json:"acceptedPerSec"`
	AcceptP50ms         float64 `json:"acceptLatencyP50ms"`
	AcceptP90ms         float64 `json:"acceptLatencyP90ms"`
	AcceptP99ms         float64 `json:"acceptLatencyP99ms"`
	EndToEndSeconds     float64 `json:"endToEndSeconds"`
	EndToEndPerSec      float64 `json:"endToEndPerSec"`
	StatusP50ms         float64 `json:"statusLatencyP50ms"`
	StatusP99ms         float64 `json:"statusLatencyP99ms"`
	Webhooks            int     `json:"webhooks"`
	Missing             int     `json:"missingFinalEvents"`
	Duplicates          int     `json:"duplicateEvents"`
	CPUMicrosPerMsg     float64 `json:"serviceCpuMicrosPerMessage,omitempty"`
	PeerCPUMicrosPerMsg float64 `json:"peerCpuMicrosPerMessage,omitempty"`
	ServiceCPUSecs      float64 `json:"serviceCpuSeconds,omitempty"`
	PeakRSSMiB          float64 `json:"servicePeakRssMiB,omitempty"`
	FinalRSSMiB         float64 `json:"serviceRssMiB,omitempty"`
	// The database server's CPU (a local PostgreSQL's processes serving
	// the nodes), and the nodes' and the database's together.
	DBCPUSecs            float64    `json:"databaseCpuSeconds,omitempty"`
	DBCPUMicrosPerMsg    float64    `json:"databaseCpuMicrosPerMessage,omitempty"`
	TotalCPUMicrosPerMsg float64    `json:"totalCpuMicrosPerMessage,omitempty"`
	Memory               []MemPoint `json:"memory,omitempty"`
	Locks                *LockStats `json:"databaseLockWaits,omitempty"`
	// What the run wrote: rows inserted, updated or deleted per message
	// (in all and by table) and the database server's WAL bytes per
	// message (a PostgreSQL of this machine; the server's whole WAL, so
	// other work on it counts too), and the bytes the nodes themselves
	// wrote to storage per message (a node on SQLite: its WAL and checkpoints).
	RowWritesPerMsg  float64            `json:"rowWritesPerMessage,omitempty"`
	RowWritesByTable map[string]float64 `json:"rowWritesPerMessageByTable,omitempty"`
	WALBytesPerMsg   float64            `json:"walBytesPerMessage,omitempty"`
	DiskBytesPerMsg  float64            `json:"serviceDiskBytesPerMessage,omitempty"`
	BenchCPUSecs     float64            `json:"benchCpuSeconds"`
	// Cycle is the nodes' write path during the run (nil for a build that
	// exposes no write metrics).
	Cycle            *Cycle `json:"writeCycle,omitempty"`
	FirstErrorSample string `json:"firstError,omitempty"`
}

// receiver collects webhooks: the first final status per message, and
// duplicates by webhook-id.
type receiver struct {
	mu       sync.Mutex
	seen     map[string]struct{} // webhook-id
	final    map[string]time.Time
	dups     int
	total    int
	finals   map[string]bool
	finished chan struct{}
	want     int
	done     bool
}

type payload struct {
	Event     string `json:"event"`
	MessageID string `json:"messageId"`
	Status    string `json:"status"`
}

func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		w.WriteHeader(400)
		return
	}
	now := time.Now()
	var p payload
	wid := r.Header.Get("webhook-id")
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		p, wid = twilioCallback(body, r.Header)
	} else {
		_ = json.Unmarshal(body, &p)
	}
	rc.mu.Lock()
	rc.total++
	if _, dup := rc.seen[wid]; dup {
		rc.dups++
	} else {
		rc.seen[wid] = struct{}{}
	}
	if rc.finals[p.Status] {
		if _, ok := rc.final[p.MessageID]; !ok {
			rc.final[p.MessageID] = now
			if !rc.done && rc.want > 0 && len(rc.final) >= rc.want {
				rc.done = true
				close(rc.finished)
			}
		}
	}
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// finalStatuses are the statuses after which a message of a type has told
// its whole story (Twilio's spelling for the Twilio front).
func finalStatuses(typ, front string) map[string]bool {
	if front == FrontTwilio {
		return map[string]bool{"delivered": true, "undelivered": true, "failed": true, "canceled": true, "read": true}
	}
	if typ == "WHATSAPP" || typ == "RCS" {
		return map[string]bool{"READ": true, "FAILED": true, "CANCELED": true}
	}
	return map[string]bool{"DELIVERED": true, "READ": true, "FAILED": true, "CANCELED": true}
}

// Run performs one benchmark run: start a webhook receiver, send, wait for
// the final webhooks, and measure.
func Run(ctx context.Context, o Options) (Result, error) {
	if o.N <= 0 || o.C <= 0 {
		return Result{}, errors.New("n and c must be positive")
	}
	o = o.withDefaults()
	if err := o.checkFront(); err != nil {
		return Result{}, err
	}
	rc := &receiver{seen: map[string]struct{}{}, final: map[string]time.Time{}, finals: finalStatuses(o.Type, o.Front), finished: make(chan struct{})}
	ln, err := net.Listen("tcp", o.CallbackTo)
	if err != nil {
		return Result{}, fmt.Errorf("webhook receiver: %w", err)
	}
	hsrv := &http.Server{Handler: rc, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = hsrv.Serve(ln) }()
	defer hsrv.Close()
	callback := "http://" + ln.Addr().String() + "/hooks"
	if o.NoCallback {
		if o.Finished == nil {
			return Result{}, errors.New("without callbacks the bench needs a way to count finished messages")
		}
		callback = ""
	}

	cpu0, _ := procCPU(os.Getpid())
	svcCPU0 := sumCPU(o.PIDs)
	remote := len(o.PIDs) == 0 // nodes elsewhere: their /metrics tell their cost
	if remote {
		if svcCPU0, err = metricsCPU(ctx, o.nodes()); err != nil {
			remote = false // nodes without metrics: no CPU figure
		}
	}
	peerCPU0 := sumCPU(peers(o.PeerPID))
	var db0 map[int]time.Duration
	if o.DB != nil {
		if db0, err = processCPU(ctx, o.DB); err != nil {
			return Result{}, fmt.Errorf("database CPU: %w", err)
		}
	}
	disk0 := diskWrites(o.PIDs)
	wc, counting := o.DB.(WriteCounter)
	var writes0 Writes
	if counting {
		if writes0, err = wc.Writes(ctx); err != nil {
			return Result{}, fmt.Errorf("database writes: %w", err)
		}
	}
	cycle0, _ := writeSeries(ctx, o.nodes())
	var accepted atomic.Int64
	smp := newSampler(o.PIDs, o.DB, &accepted, o.N)
	sctx, stopSampling := context.WithCancel(ctx)
	sampled := make(chan struct{})
	go func() { defer close(sampled); smp.run(sctx) }()
	start := time.Now()
	sent := o.send(ctx, callback, &accepted)
	var finishedAt time.Time
	if o.NoCallback {
		finishedAt = poll(ctx, o.Finished, len(sent.at), o.Wait)
	} else {
		rc.await(ctx, len(sent.at), o.Wait)
	}
	stopSampling()
	<-sampled

	front := o.Front
	if front == "" {
		front = FrontNative
	}
	res := Result{Front: front, Messages: o.N, Requests: sent.requests, Concurrency: o.C, Accepted: len(sent.at), Refused: sent.refused,
		SendSeconds: sent.took.Seconds(), FirstErrorSample: sent.firstErr}
	res.latencies(sent, rc, start)
	if o.NoCallback {
		res.settled(ctx, o.Finished, len(sent.at), start, finishedAt)
	}
	if cpu1, err := procCPU(os.Getpid()); err == nil {
		res.BenchCPUSecs = (cpu1 - cpu0).Seconds()
	}
	res.serviceCost(o.PIDs, svcCPU0)
	if len(o.PIDs) > 0 && res.Accepted > 0 {
		res.DiskBytesPerMsg = float64(diskWrites(o.PIDs)-disk0) / float64(res.Accepted)
	}
	if counting {
		writes1, err := wc.Writes(ctx)
		if err != nil {
			return res, fmt.Errorf("database writes: %w", err)
		}
		res.writeCost(writes1, writes0)
	}
	if remote && res.Accepted > 0 {
		if cpu1, err := metricsCPU(ctx, o.nodes()); err == nil {
			res.ServiceCPUSecs = (cpu1 - svcCPU0).Seconds()
			res.CPUMicrosPerMsg = float64((cpu1 - svcCPU0).Microseconds()) / float64(res.Accepted)
			res.FinalRSSMiB = metricsRSS(ctx, o.nodes())
		}
	}
	if cycle0 != nil {
		if cycle1, err := writeSeries(ctx, o.nodes()); err == nil {
			res.Cycle = cycleOf(cycle0, cycle1)
		}
	}
	res.Memory, _ = smp.result(ctx)
	if o.DB != nil {
		_, locks := smp.result(ctx)
		res.Locks = &locks
		if err := res.databaseCost(ctx, o.DB, db0); err != nil {
			return res, err
		}
	}
	if o.PeerPID > 0 && res.Accepted > 0 {
		res.PeerCPUMicrosPerMsg = float64((sumCPU(peers(o.PeerPID)) - peerCPU0).Microseconds()) / float64(res.Accepted)
	}
	return res, nil
}

func peers(pid int) []int {
	if pid <= 0 {
		return nil
	}
	return []int{pid}
}

// nodes lists the base URLs of the nodes under load.
func (o Options) nodes() []string {
	if len(o.URLs) > 0 {
		return o.URLs
	}
	return []string{o.URL}
}

func (o Options) withDefaults() Options {
	if o.BatchSize <= 0 {
		o.BatchSize = 1
	}
	if o.Type == "" {
		o.Type = "SMS"
	}
	if o.Text == "" {
		o.Text = "Your verification code is 123456"
	}
	if o.Wait <= 0 {
		o.Wait = 60 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 10 * time.Minute
	}
	if o.CallbackTo == "" {
		o.CallbackTo = "127.0.0.1:0"
	}
	if len(o.PIDs) == 0 && o.PID > 0 {
		o.PIDs = []int{o.PID}
	}
	return o
}

// sendPhase is what the send phase did.
type sendPhase struct {
	requests  int
	latencies []time.Duration      // of accepted requests, sorted
	at        map[string]time.Time // when each accepted message was sent
	refused   int
	firstErr  string
	took      time.Duration
}

// send posts every request over o.C keep-alive connections, counting the
// accepted messages in accepted as it goes.
func (o Options) send(ctx context.Context, callback string, accepted *atomic.Int64) sendPhase {
	requests := (o.N + o.BatchSize - 1) / o.BatchSize
	transport := &http.Transport{MaxIdleConnsPerHost: o.C, MaxConnsPerHost: o.C, IdleConnTimeout: time.Minute}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	defer transport.CloseIdleConnections()
	out := sendPhase{requests: requests, latencies: make([]time.Duration, 0, requests), at: make(map[string]time.Time, o.N)}
	var next atomic.Int64
	var mu sync.Mutex
	sendCtx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < o.C; w++ {
		wg.Go(func() {
			for sendCtx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= requests {
					return
				}
				if o.Rate > 0 {
					due := start.Add(time.Duration(float64(i) / o.Rate * float64(time.Second)))
					select {
					case <-sendCtx.Done():
						return
					case <-time.After(time.Until(due)):
					}
				}
				base := o.URL
				if len(o.URLs) > 1 {
					base = o.URLs[i%len(o.URLs)]
				}
				t0 := time.Now()
				var ids []string
				var err error
				if o.Front == FrontTwilio {
					ids, err = postTwilio(sendCtx, client, base, o.Twilio, o.twilioForm(i, callback))
				} else {
					ids, err = post(sendCtx, client, base, o.Key, o.body(i, callback))
				}
				d := time.Since(t0)
				mu.Lock()
				out.record(ids, err, t0, d)
				mu.Unlock()
				accepted.Add(int64(len(ids)))
			}
		})
	}
	wg.Wait()
	out.took = time.Since(start)
	sort.Slice(out.latencies, func(i, j int) bool { return out.latencies[i] < out.latencies[j] })
	return out
}

func (p *sendPhase) record(ids []string, err error, t0 time.Time, d time.Duration) {
	if err != nil {
		p.refused++
		if p.firstErr == "" {
			p.firstErr = err.Error()
		}
		return
	}
	p.latencies = append(p.latencies, d)
	for _, id := range ids {
		p.at[id] = t0
	}
}

// await waits until every accepted message's final webhook arrived, or
// wait passed.
func (rc *receiver) await(ctx context.Context, accepted int, wait time.Duration) {
	rc.mu.Lock()
	rc.want = accepted
	if len(rc.final) >= accepted && !rc.done {
		rc.done = true
		close(rc.finished)
	}
	rc.mu.Unlock()
	select {
	case <-rc.finished:
	case <-time.After(wait):
	case <-ctx.Done():
	}
	// A moment for late duplicates to show.
	time.Sleep(200 * time.Millisecond)
}

// poll counts finished messages every 50 ms until want have finished or
// wait passed, and returns when the count was first reached (zero if not).
func poll(ctx context.Context, finished func(context.Context) (int, error), want int, wait time.Duration) time.Time {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if n, err := finished(ctx); err == nil && n >= want {
			return time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Time{}
}

// settled fills in what a run without callbacks can tell: how many
// messages never finished, and the end-to-end rate to the last one.
func (res *Result) settled(ctx context.Context, finished func(context.Context) (int, error), accepted int, start, at time.Time) {
	n, err := finished(ctx)
	if err != nil {
		n = 0
	}
	res.Missing = max(0, accepted-n)
	if !at.IsZero() {
		res.EndToEndSeconds = at.Sub(start).Seconds()
		res.EndToEndPerSec = float64(accepted) / res.EndToEndSeconds
	}
}

// latencies fills in the rates and latencies of the run.
func (res *Result) latencies(sent sendPhase, rc *receiver, start time.Time) {
	if sent.took > 0 {
		res.AcceptedPerSec = float64(len(sent.at)) / sent.took.Seconds()
	}
	res.AcceptP50ms, res.AcceptP90ms, res.AcceptP99ms = pct(sent.latencies, 50), pct(sent.latencies, 90), pct(sent.latencies, 99)
	rc.mu.Lock()
	var statusLat []time.Duration
	var last time.Time
	for id, t0 := range sent.at {
		if t, ok := rc.final[id]; ok {
			statusLat = append(statusLat, t.Sub(t0))
			if t.After(last) {
				last = t
			}
		} else {
			res.Missing++
		}
	}
	res.Webhooks, res.Duplicates = rc.total, rc.dups
	rc.mu.Unlock()
	sort.Slice(statusLat, func(i, j int) bool { return statusLat[i] < statusLat[j] })
	res.StatusP50ms, res.StatusP99ms = pct(statusLat, 50), pct(statusLat, 99)
	if !last.IsZero() {
		res.EndToEndSeconds = last.Sub(start).Seconds()
		res.EndToEndPerSec = float64(len(statusLat)) / res.EndToEndSeconds
	}
}

// serviceCost fills in the CPU and memory of the service's processes.
func (res *Result) serviceCost(pids []int, cpu0 time.Duration) {
	if len(pids) == 0 || res.Accepted == 0 {
		return
	}
	used := sumCPU(pids) - cpu0
	res.ServiceCPUSecs = used.Seconds()
	res.CPUMicrosPerMsg = float64(used.Microseconds()) / float64(res.Accepted)
	for _, pid := range pids {
		peak, cur := procMem(pid)
		res.PeakRSSMiB = max(res.PeakRSSMiB, peak)
		res.FinalRSSMiB += cur
	}
}

// databaseCost fills in the database server's CPU since before.
func (res *Result) databaseCost(ctx context.Context, db DBProbe, before map[int]time.Duration) error {
	after, err := processCPU(ctx, db)
	if err != nil {
		return fmt.Errorf("database CPU: %w", err)
	}
	if res.Accepted == 0 {
		return nil
	}
	used := cpuDelta(before, after)
	res.DBCPUSecs = used.Seconds()
	res.DBCPUMicrosPerMsg = float64(used.Microseconds()) / float64(res.Accepted)
	res.TotalCPUMicrosPerMsg = res.CPUMicrosPerMsg + res.DBCPUMicrosPerMsg
	return nil
}

// body builds request i: one recipient or a batch, numbers that the
// simulator delivers (never ending in 0001–0005).
func (o Options) body(i int, callback string) []byte {
	m := map[string]any{"message": o.Text, "type": o.Type}
	if callback != "" {
		m["callbackUrl"] = callback
	}
	for k, v := range o.ExtraFields {
		m[k] = v
	}
	if o.BatchSize == 1 {
		m["to"] = number(i)
	} else {
		rs := make([]string, 0, o.BatchSize)
		for j := 0; j < o.BatchSize && i*o.BatchSize+j < o.N; j++ {
			rs = append(rs, number(i*o.BatchSize+j))
		}
		m["recipients"] = rs
	}
	b, _ := json.Marshal(m)
	return b
}

// number spreads recipients over Brazilian mobile numbers whose last four
// digits avoid the simulator's special endings.
func number(i int) string {
	last := 1000 + i%9000 // 1000..9999
	block := i / 9000
	return fmt.Sprintf("55119%04d%04d", block%10000, last)
}

func post(ctx context.Context, c *http.Client, base, key string, body []byte) ([]string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/integration/messages", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-KEY", key)
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		return nil, fmt.Errorf("status %d: %.200s", resp.StatusCode, raw)
	}
	var out struct {
		Messages []struct {
			MessageID string `json:"messageId"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, err
	}
	ids := make([]string, len(out.Messages))
	for i, m := range out.Messages {
		ids[i] = m.MessageID
	}
	return ids, nil
}

func pct(d []time.Duration, p int) float64 {
	if len(d) == 0 {
		return 0
	}
	i := (len(d)*p + 99) / 100
	if i > 0 {
		i--
	}
	return float64(d[i].Microseconds()) / 1000
}

// procCPU reads a process's user+system CPU time from /proc (Linux).
func procCPU(pid int) (time.Duration, error) {
	if pid <= 0 {
		return 0, errors.New("no pid")
	}
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	s := string(raw)
	// Fields after the command name, which is in parentheses and may
	// contain spaces.
	s = s[strings.LastIndexByte(s, ')')+2:]
	f := strings.Fields(s)
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	const ticks = 100 // USER_HZ on Linux
	return time.Duration(ut+st) * time.Second / ticks, nil
}

func sumCPU(pids []int) time.Duration {
	var total time.Duration
	for _, p := range pids {
		if d, err := procCPU(p); err == nil {
			total += d
		}
	}
	return total
}

// procMem reads peak and current resident memory in MiB.
func procMem(pid int) (peak, cur float64) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmHWM:":
			peak = kb / 1024
		case "VmRSS:":
			cur = kb / 1024
		}
	}
	return peak, cur
}
