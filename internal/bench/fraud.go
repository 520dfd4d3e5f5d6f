package bench

import (
	"bytes"
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
)

// `msgsvc bench --fraud`: the traffic of fraudtraffic.go sent through a
// node it starts, once with the guard off and once with it on, in turns
// and in one sitting, each run on a fresh database whose accounts carry a
// day of history (so that the guard's trailing baselines exist). It
// reports what the guard stopped, split by the traffic's labels, and what
// the guard cost in CPU per message.

// Guard modes of a run: no rules at all; the rules in alert mode (every
// rule is counted and decided and every decision recorded, but nothing is
// stopped: the same work downstream as "off", so the difference is the
// guard's own cost); and the rules blocking.
const (
	ModeOff   = "off"
	ModeAlert = string(domain.FraudAlert)
	ModeBlock = string(domain.FraudBlock)
	ModeHold  = string(domain.FraudHold)
)

// DefaultFraudRules are the rules the bench sets as the operator's
// defaults (docs/fraud.md, "Choosing the rules", says why these).
func DefaultFraudRules() domain.FraudRules {
	perRecipient, perRange, burst := 10, 50, 5.0
	return domain.FraudRules{PerRecipientHourly: &perRecipient, PerRangeHourly: &perRange, BurstFactor: &burst, Action: domain.FraudBlock}
}

// FraudOptions describe a fraud bench.
type FraudOptions struct {
	Seed   uint64
	Rounds int      // runs of each mode
	Modes  []string // the modes each round runs, in order
	// Hour is the wall time the traffic's hour is compressed into.
	Hour time.Duration
	C    int
	// HistoryHours of the accounts' ordinary traffic are counted before
	// the run, as the guard would have counted them.
	HistoryHours int
	Rules        domain.FraudRules
	DB           string // for the nodes: "" (a temporary SQLite) or postgres://…
	Exe          string
	Extra        []string
	Keep         bool
	Wait         time.Duration // for the messages to settle after the last send
	Progress     io.Writer
	Stderr       io.Writer
	// GuardAlone also measures the guard's own CPU in process (GuardAlone).
	GuardAlone bool
	// Now is the clock the bench waits on (for a run to fit in one UTC
	// hour); nil is time.Now.
	Now func() time.Time
}

func (o FraudOptions) withDefaults() FraudOptions {
	if o.Rounds <= 0 {
		o.Rounds = 3
	}
	if len(o.Modes) == 0 {
		o.Modes = []string{ModeOff, ModeAlert, ModeBlock}
	}
	if o.Hour <= 0 {
		o.Hour = 20 * time.Second
	}
	if o.C <= 0 {
		o.C = 8
	}
	if o.HistoryHours <= 0 {
		o.HistoryHours = 24
	}
	if o.Rules.Action == "" && o.Rules.PerRecipientHourly == nil && o.Rules.PerRangeHourly == nil && o.Rules.BurstFactor == nil {
		o.Rules = DefaultFraudRules()
	}
	if o.Wait <= 0 {
		o.Wait = 60 * time.Second
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if o.Stderr == nil {
		o.Stderr = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// FraudFigures are what one run's guard did to the traffic.
type FraudFigures struct {
	Attack        int `json:"attack"`
	AttackStopped int `json:"attackStopped"`
	// ThroughBeforeFirstStop are the attack's messages that went out
	// before the guard stopped the first one.
	ThroughBeforeFirstStop int     `json:"throughBeforeFirstStop"`
	AfterFirst30           int     `json:"afterFirst30"`
	AfterFirst30Stopped    int     `json:"afterFirst30Stopped"`
	Normal                 int     `json:"normal"`
	NormalStopped          int     `json:"normalStopped"`
	StoppedShare           float64 `json:"attackStoppedShare"`
	AfterFirst30Share      float64 `json:"afterFirst30StoppedShare"`
	FalsePositiveRate      float64 `json:"falsePositiveRate"`
	// Refused are sends the API did not accept (any answer but 202).
	Refused int `json:"refused"`
	// ByRule counts the decisions by rule and scope ("burstFactor/country").
	ByRule map[string]int `json:"byRule,omitempty"`
	// FalsePositives names the ordinary messages stopped (at most 20).
	FalsePositives []string `json:"falsePositives,omitempty"`
}

// FraudRun is one run.
type FraudRun struct {
	Mode            string       `json:"mode"`
	Round           int          `json:"round"`
	Sends           int          `json:"sends"`
	Accepted        int          `json:"accepted"`
	SendSeconds     float64      `json:"sendSeconds"`
	SettleSeconds   float64      `json:"settleSeconds"`
	ServiceCPUSecs  float64      `json:"serviceCpuSeconds"`
	CPUMicrosPerMsg float64      `json:"serviceCpuMicrosPerMessage"`
	Figures         FraudFigures `json:"figures"`
	FirstError      string       `json:"firstError,omitempty"`
}

// FraudResult is a whole fraud bench.
type FraudResult struct {
	Seed         uint64            `json:"seed"`
	Traffic      TrafficSummary    `json:"traffic"`
	Accounts     []string          `json:"accounts"`
	Rules        domain.FraudRules `json:"rules"`
	Trusted      []string          `json:"trusted"`
	HistoryHours int               `json:"historyHours"`
	HourSeconds  float64           `json:"hourCompressedIntoSeconds"`
	Runs         []FraudRun        `json:"runs"`
	// MedianCPU is the median CPU per message of each mode's runs, and
	// AddedCPU each mode's median less the median with the guard off.
	MedianCPU map[string]float64 `json:"medianCpuMicrosPerMessage"`
	AddedCPU  map[string]float64 `json:"addedCpuMicrosPerMessage"`
	// Guard is the guard's own CPU, measured in process (GuardAlone).
	Guard *GuardAlone `json:"guardAlone,omitempty"`
}

// RunFraud runs the fraud bench.
func RunFraud(ctx context.Context, o FraudOptions) (FraudResult, error) {
	o = o.withDefaults()
	for _, m := range o.Modes {
		if m != ModeOff && m != ModeAlert && m != ModeBlock && m != ModeHold {
			return FraudResult{}, fmt.Errorf("unknown guard mode %q (off, alert, block or hold)", m)
		}
	}
	tr := NewTraffic(o.Seed)
	res := FraudResult{Seed: o.Seed, Traffic: tr.Summary(), Rules: o.Rules, HistoryHours: o.HistoryHours, HourSeconds: o.Hour.Seconds(),
		MedianCPU: map[string]float64{}, AddedCPU: map[string]float64{}}
	for _, a := range tr.Accounts {
		res.Accounts = append(res.Accounts, a.Name)
		res.Trusted = append(res.Trusted, a.Staff...)
	}
	fmt.Fprintf(o.Progress, "traffic: %d sends (%d ordinary, %d attack), an hour compressed into %s\n",
		len(tr.Sends), res.Traffic.Normal, res.Traffic.Attack, o.Hour)
	history := historyCounts(tr, o.HistoryHours)
	for round := 1; round <= o.Rounds; round++ {
		for _, mode := range roundOrder(o.Modes, round) {
			run, err := fraudRun(ctx, o, tr, history, mode)
			run.Round = round
			if err != nil {
				return res, fmt.Errorf("round %d, guard %s: %w", round, mode, err)
			}
			fmt.Fprintf(o.Progress, "round %d, guard %-5s: %s\n", round, mode, run.line())
			res.Runs = append(res.Runs, run)
		}
	}
	for _, m := range o.Modes {
		var cpu []float64
		for _, r := range res.Runs {
			if r.Mode == m {
				cpu = append(cpu, r.CPUMicrosPerMsg)
			}
		}
		res.MedianCPU[m] = median(cpu)
	}
	if o.GuardAlone {
		g, err := guardAlone(ctx, tr, history, o.Rules, o.Hour)
		if err != nil {
			return res, fmt.Errorf("the guard alone: %w", err)
		}
		fmt.Fprintf(o.Progress, "the guard alone: %.1f µs CPU/message\n", g.CPUMicrosPerMsg)
		res.Guard = &g
	}
	if off, ok := res.MedianCPU[ModeOff]; ok {
		for m, v := range res.MedianCPU {
			if m != ModeOff {
				res.AddedCPU[m] = v - off
			}
		}
	}
	return res, nil
}

// roundOrder is the order of the modes in a round: as given in odd
// rounds, reversed in even ones. A node run costs more or less by its
// place in a round (the previous run's files still being written back,
// say: alert ran 15 to 25 µs a message dearer after off than before it),
// so a fixed order would put that into alert − off.
func roundOrder(modes []string, round int) []string {
	if round%2 == 1 {
		return modes
	}
	out := slices.Clone(modes)
	slices.Reverse(out)
	return out
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func (r FraudRun) line() string {
	f := r.Figures
	return fmt.Sprintf("%d accepted in %.1fs, %.0f µs CPU/message; attack stopped %d of %d, %d through before the first stop, "+
		"after the first 30 %d of %d; ordinary stopped %d of %d", r.Accepted, r.SendSeconds, r.CPUMicrosPerMsg, f.AttackStopped, f.Attack,
		f.ThroughBeforeFirstStop, f.AfterFirst30Stopped, f.AfterFirst30, f.NormalStopped, f.Normal)
}

// fraudNode is a started node with the model's accounts.
type fraudNode struct {
	*Nodes
	keys     []string // per account of the model
	accounts []string // their ids
	operator struct{ email, password string }
}

// fraudRun starts a node, sets the mode's rules as an operator would,
// sends the hour and reads back what became of each message.
func fraudRun(ctx context.Context, o FraudOptions, tr Traffic, history []HourCount, mode string) (FraudRun, error) {
	run := FraudRun{Mode: mode, Sends: len(tr.Sends)}
	// The guard counts by UTC hour: a run that straddled the turn of the
	// hour would start its counts again halfway. Leave room for the node's
	// start and the messages to settle.
	if err := fitInHour(ctx, o.Now, o.Hour+45*time.Second, o.Progress); err != nil {
		return run, err
	}
	n, err := startFraudNode(ctx, o, tr, history)
	if err != nil {
		return run, err
	}
	defer n.Stop()
	if mode != ModeOff {
		if err := n.setRules(ctx, o.Rules, mode, tr); err != nil {
			return run, err
		}
	} else if _, err := n.login(ctx); err != nil {
		// The operator signs in with the guard off too: checking the
		// password takes argon2id's 64 MiB, which the Go runtime then
		// hands back to the system and faults in again while the
		// messages run. Paid in one mode only, that showed as 10 to 24
		// µs a message of alert − off that the guard never spent.
		return run, err
	}
	outcomes, err := openOutcomes(n.DSN)
	if err != nil {
		return run, err
	}
	defer outcomes.Close()
	cpu0 := sumCPU(n.PIDs)
	start := time.Now()
	ids, refused, firstErr := n.send(ctx, tr, o)
	run.SendSeconds = time.Since(start).Seconds()
	run.FirstError = firstErr
	settled := time.Now()
	if err := outcomes.settle(ctx, o.Wait); err != nil {
		return run, err
	}
	run.SettleSeconds = time.Since(settled).Seconds()
	used := sumCPU(n.PIDs) - cpu0
	for _, id := range ids {
		if id != "" {
			run.Accepted++
		}
	}
	run.ServiceCPUSecs = used.Seconds()
	if run.Accepted > 0 {
		run.CPUMicrosPerMsg = float64(used.Microseconds()) / float64(run.Accepted)
	}
	got, err := outcomes.read(ctx)
	if err != nil {
		return run, err
	}
	run.Figures = score(tr, ids, refused, got, mode)
	return run, nil
}

// fitInHour waits, when less than need is left of the current UTC hour,
// until the next one begins.
func fitInHour(ctx context.Context, now func() time.Time, need time.Duration, progress io.Writer) error {
	t := now()
	next := t.Truncate(time.Hour).Add(time.Hour)
	if next.Sub(t) >= need {
		return nil
	}
	wait := next.Sub(t) + time.Second
	fmt.Fprintf(progress, "waiting %s for the next UTC hour, so that the run's counts fall in one hour\n", wait.Round(time.Second))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(wait):
		return nil
	}
}

const fraudOperator = "bench-operator@msgsvc.invalid"

// startFraudNode starts a node whose database holds the model's accounts
// (unlimited rates, plenty of credits, a live key each), an operator, and
// the accounts' history as the guard's counters.
func startFraudNode(ctx context.Context, o FraudOptions, tr Traffic, history []HourCount) (*fraudNode, error) {
	n := &fraudNode{}
	pw := make([]byte, 16)
	_, _ = rand.Read(pw)
	n.operator.email, n.operator.password = fraudOperator, hex.EncodeToString(pw)
	setup := func(ctx context.Context, st *store.Store, now time.Time) error {
		for _, a := range tr.Accounts {
			acct, err := bootstrap.CreateAccount(ctx, st, bootstrap.NewAccount{Name: a.Name, Tier: "enterprise", Credits: 100_000_000,
				Currency: "USD", Country: a.Home}, now)
			if err != nil {
				return fmt.Errorf("account %s: %w", a.Name, err)
			}
			if err := st.SetLimits(ctx, acct.ID, domain.Limits{}); err != nil {
				return err
			}
			key, _, err := bootstrap.CreateKey(ctx, st, acct.ID, "live", now)
			if err != nil {
				return err
			}
			n.accounts, n.keys = append(n.accounts, acct.ID), append(n.keys, key.Secret)
		}
		if _, _, err := bootstrap.CreateUser(ctx, st, "", n.operator.email, "operator", n.operator.password, now); err != nil {
			return fmt.Errorf("operator: %w", err)
		}
		return seedHistory(ctx, st, n.accounts, history, now)
	}
	started, err := StartNodes(ctx, NodeSpec{DB: o.DB, SimDelay: 100 * time.Millisecond, Keep: o.Keep, Count: 1, Extra: o.Extra,
		Exe: o.Exe, Setup: setup}, o.Stderr)
	if err != nil {
		return nil, err
	}
	n.Nodes = started
	return n, nil
}

// HourCount is a count of the history: an account's (index into the
// model) messages to a range or a country (Scope, Key) in the hour Ago
// hours before the run's.
type HourCount struct {
	Account int
	Ago     int
	Scope   string
	Key     string
	N       int64
}

// historyCounts counts the accounts' ordinary traffic of the hours before
// the run's by range and by country, as the guard counts them (trusted
// numbers, which it does not count, left out).
func historyCounts(tr Traffic, hours int) []HourCount {
	trusted := map[string]bool{}
	for _, a := range tr.Accounts {
		for _, s := range a.Staff {
			trusted[s] = true
		}
	}
	var out []HourCount
	for ago := 1; ago <= hours; ago++ {
		counts := map[HourCount]int64{}
		for _, m := range tr.History(ago) {
			if trusted[m.To] {
				continue
			}
			counts[HourCount{Account: m.Account, Ago: ago, Scope: domain.ScopeRange, Key: domain.RangeOf(m.To)}]++
			counts[HourCount{Account: m.Account, Ago: ago, Scope: domain.ScopeCountry, Key: countryOf(m.To)}]++
		}
		for k, v := range counts {
			k.N = v
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Ago != b.Ago {
			return a.Ago < b.Ago
		}
		if a.Account != b.Account {
			return a.Account < b.Account
		}
		if a.Scope != b.Scope {
			return a.Scope < b.Scope
		}
		return a.Key < b.Key
	})
	return out
}

// setRules sets the bench's rules as the operator's defaults, in the
// mode's action, and trusts the accounts' staff phones, through the
// management API as an operator does.
func (n *fraudNode) setRules(ctx context.Context, rules domain.FraudRules, mode string, tr Traffic) error {
	token, err := n.login(ctx)
	if err != nil {
		return err
	}
	rules.Action = domain.FraudAction(mode)
	if err := n.manage(ctx, token, http.MethodPut, "/api/v1/manage/fraud?default=true", rules); err != nil {
		return fmt.Errorf("the default rules: %w", err)
	}
	for i, a := range tr.Accounts {
		if len(a.Staff) == 0 {
			continue
		}
		own := rules
		own.Trusted = append(append([]string(nil), rules.Trusted...), a.Staff...)
		if err := n.manage(ctx, token, http.MethodPut, "/api/v1/manage/fraud?account="+n.accounts[i], own); err != nil {
			return fmt.Errorf("the rules of %s: %w", a.Name, err)
		}
	}
	return nil
}

func (n *fraudNode) login(ctx context.Context) (string, error) {
	var out struct {
		Token string `json:"token"`
	}
	body, _ := json.Marshal(map[string]string{"email": n.operator.email, "password": n.operator.password})
	if err := n.call(ctx, "", http.MethodPost, "/api/v1/auth/login", body, &out); err != nil {
		return "", fmt.Errorf("operator login: %w", err)
	}
	if out.Token == "" {
		return "", errors.New("operator login: no token")
	}
	return out.Token, nil
}

func (n *fraudNode) manage(ctx context.Context, token, method, path string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return n.call(ctx, token, method, path, body, nil)
}

func (n *fraudNode) call(ctx context.Context, token, method, path string, body []byte, out any) error {
	req, err := http.NewRequestWithContext(ctx, method, n.URLs[0]+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("%s %s: status %d: %.300s", method, path, resp.StatusCode, raw)
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

// send makes the hour's sends in their order, each at its moment of the
// compressed hour, over o.C connections; ids[i] is send i's message id
// ("" when refused).
func (n *fraudNode) send(ctx context.Context, tr Traffic, o FraudOptions) (ids []string, refused []bool, firstErr string) {
	transport := &http.Transport{MaxIdleConnsPerHost: o.C, MaxConnsPerHost: o.C, IdleConnTimeout: time.Minute}
	client := &http.Client{Transport: transport, Timeout: 30 * time.Second}
	defer transport.CloseIdleConnections()
	ids, refused = make([]string, len(tr.Sends)), make([]bool, len(tr.Sends))
	scale := float64(o.Hour) / float64(time.Hour)
	var next atomic.Int64
	var mu sync.Mutex
	start := time.Now()
	var wg sync.WaitGroup
	for range o.C {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1)) - 1
				if i >= len(tr.Sends) {
					return
				}
				m := tr.Sends[i]
				if wait := time.Until(start.Add(time.Duration(float64(m.At) * scale))); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				body, _ := json.Marshal(map[string]string{"to": m.To, "message": fraudText(m), "type": "SMS"})
				got, err := post(ctx, client, n.URLs[0], n.keys[m.Account], body)
				if err != nil || len(got) != 1 {
					refused[i] = true
					mu.Lock()
					if firstErr == "" {
						firstErr = fmt.Sprint(err)
					}
					mu.Unlock()
					continue
				}
				ids[i] = got[0]
			}
		})
	}
	wg.Wait()
	return ids, refused, firstErr
}

// fraudText is a message of the send's kind.
func fraudText(m FraudSend) string {
	switch m.Kind {
	case KindOTP, KindPump:
		return "Your verification code is 482913. It expires in 10 minutes."
	case KindStaff:
		return "ALERT payments-api p95 latency above 800 ms for 5 min"
	case KindCampaign:
		return "Your parcel is out for delivery today between 10:00 and 14:00."
	}
	return "Your order has been updated: track it in the app."
}

// outcome is what became of a message.
type outcome struct {
	Status    string
	ErrorCode string
	Rule      string // the decision's rule and scope, "" when none
}

// stopped reports whether the guard kept the message from going out.
func (c outcome) stopped() bool {
	return c.Status == string(domain.Held) || c.Status == string(domain.Failed) && c.ErrorCode == "FRAUD_SUSPECTED"
}

// outcomes reads the run's messages from its database directly: polling
// the API would add to the CPU measured.
type outcomes struct {
	db *sql.DB
}

func openOutcomes(dsn string) (*outcomes, error) {
	driver := "sqlite"
	if strings.HasPrefix(dsn, "postgres") {
		driver = "pgx"
	}
	db, err := sql.Open(driver, dsn)
	if err != nil {
		return nil, fmt.Errorf("open the bench database: %w", err)
	}
	return &outcomes{db: db}, nil
}

func (o *outcomes) Close() error { return o.db.Close() }

// settle waits until no message is on its way (held ones stay held).
func (o *outcomes) settle(ctx context.Context, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		var open int
		err := o.db.QueryRowContext(ctx, `SELECT COUNT(*) FROM messages WHERE status IN ($1, $2)`,
			string(domain.Sending), string(domain.Sent)).Scan(&open)
		if err != nil {
			return fmt.Errorf("count open messages: %w", err)
		}
		if open == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%d messages still on their way after %s", open, wait)
		}
		sleep(ctx, 100*time.Millisecond)
	}
}

func (o *outcomes) read(ctx context.Context) (map[string]outcome, error) {
	rows, err := o.db.QueryContext(ctx, `SELECT id, status, error_code, `+fraudRuleColumn+` FROM messages`)
	if err != nil {
		return nil, fmt.Errorf("read outcomes: %w", err)
	}
	defer rows.Close()
	out := map[string]outcome{}
	for rows.Next() {
		var id string
		var c outcome
		var decision sql.NullString
		if err := rows.Scan(&id, &c.Status, &c.ErrorCode, &decision); err != nil {
			return nil, err
		}
		c.Rule = ruleOf(decision.String)
		out[id] = c
	}
	return out, rows.Err()
}

// score splits the run's outcomes by the traffic's labels. In alert mode
// nothing is stopped: a message counts as stopped when the guard decided
// against it, so the figures say what block would have done.
func score(tr Traffic, ids []string, refused []bool, got map[string]outcome, mode string) FraudFigures {
	f := FraudFigures{ByRule: map[string]int{}}
	first := -1
	for i, m := range tr.Sends {
		if refused[i] {
			f.Refused++
		}
		c := got[ids[i]]
		stop := c.stopped() || mode == ModeAlert && c.Rule != ""
		if c.Rule != "" {
			f.ByRule[c.Rule]++
		}
		if m.Label == LabelNormal {
			f.Normal++
			if stop {
				f.NormalStopped++
				if len(f.FalsePositives) < 20 {
					f.FalsePositives = append(f.FalsePositives, fmt.Sprintf("%s → %s (%s, %s)", tr.Accounts[m.Account].Name, m.To, m.Kind, c.Rule))
				}
			}
			continue
		}
		k := f.Attack
		f.Attack++
		if stop {
			f.AttackStopped++
			if first < 0 {
				first = k
			}
		}
		if k >= 30 {
			f.AfterFirst30++
			if stop {
				f.AfterFirst30Stopped++
			}
		}
	}
	f.ThroughBeforeFirstStop = first
	if first < 0 {
		f.ThroughBeforeFirstStop = f.Attack
	}
	f.StoppedShare = share(f.AttackStopped, f.Attack)
	f.AfterFirst30Share = share(f.AfterFirst30Stopped, f.AfterFirst30)
	f.FalsePositiveRate = share(f.NormalStopped, f.Normal)
	return f
}

func share(n, of int) float64 {
	if of == 0 {
		return 0
	}
	return float64(n) / float64(of)
}
