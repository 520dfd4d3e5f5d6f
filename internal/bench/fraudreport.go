package bench

import (
	"fmt"
	"io"
	"sort"
	"strings"
)

// PrintFraud writes a fraud bench's result as msgsvc bench --fraud shows it.
func PrintFraud(w io.Writer, r FraudResult) {
	t := r.Traffic
	fmt.Fprintf(w, "traffic (seed %d): %d sends in an hour compressed into %.0fs: %d ordinary from %d accounts, %d attack\n",
		r.Seed, t.Normal+t.Attack, r.HourSeconds, t.Normal, len(r.Accounts), t.Attack)
	fmt.Fprintf(w, "  ordinary: %d recipients, %.0f %% of sends to one sent to before in the hour, at most %d to one customer, %.1f %% to home countries\n",
		t.Recipients, 100*t.RepeatShare, t.MaxPerRecipient, 100*t.HomeShare)
	fmt.Fprintf(w, "  history: %d hours of the same accounts' ordinary traffic counted before each run\n", r.HistoryHours)
	fmt.Fprintf(w, "rules: %s; trusted: %s\n", rulesText(r), strings.Join(r.Trusted, ", "))
	fmt.Fprintf(w, "%-6s %5s %9s %12s %15s %15s %17s %15s\n", "guard", "round", "accepted", "CPU µs/msg", "attack stopped",
		"through before", "after first 30", "false positives")
	for _, run := range r.Runs {
		f := run.Figures
		fmt.Fprintf(w, "%-6s %5d %9d %12.0f %15s %15d %17s %15s\n", run.Mode, run.Round, run.Accepted, run.CPUMicrosPerMsg,
			pctOf(f.AttackStopped, f.Attack), f.ThroughBeforeFirstStop, pctOf(f.AfterFirst30Stopped, f.AfterFirst30),
			fmt.Sprintf("%d (%.3f %%)", f.NormalStopped, 100*f.FalsePositiveRate))
	}
	modes := make([]string, 0, len(r.MedianCPU))
	for m := range r.MedianCPU {
		modes = append(modes, m)
	}
	sort.Strings(modes)
	for _, m := range modes {
		line := fmt.Sprintf("median CPU, guard %-5s %6.0f µs/message", m, r.MedianCPU[m])
		if d, ok := r.AddedCPU[m]; ok {
			line += fmt.Sprintf("  (%+.0f µs against off)", d)
		}
		fmt.Fprintln(w, line)
	}
	if g := r.Guard; g != nil {
		fmt.Fprintf(w, "the guard alone       %6.1f µs/message (process CPU of a SQLite transaction of %d send with Guard.Check, commit included, "+
			"less an empty transaction's; it stopped %d attack and %d ordinary messages)\n", g.CPUMicrosPerMsg, guardGroup, g.AttackStopped,
			g.NormalStopped)
	}
	if last, ok := r.last(ModeBlock); ok {
		f := last.Figures
		fmt.Fprintf(w, "blocking (round %d): %d of %d attack messages stopped (%.2f %%), %d through before the first block, "+
			"%.2f %% stopped after the first 30; %d of %d ordinary stopped (%.3f %%)\n", last.Round, f.AttackStopped, f.Attack,
			100*f.StoppedShare, f.ThroughBeforeFirstStop, 100*f.AfterFirst30Share, f.NormalStopped, f.Normal, 100*f.FalsePositiveRate)
		if len(f.ByRule) > 0 {
			rules := make([]string, 0, len(f.ByRule))
			for k, n := range f.ByRule {
				rules = append(rules, fmt.Sprintf("%s %d", k, n))
			}
			sort.Strings(rules)
			fmt.Fprintf(w, "  decisions by rule: %s\n", strings.Join(rules, ", "))
		}
		for _, fp := range f.FalsePositives {
			fmt.Fprintf(w, "  false positive: %s\n", fp)
		}
		added, measured := r.AddedCPU[ModeAlert]
		cpu := metIf(measured, added <= 20) + " (node, alert against off)"
		if g := r.Guard; g != nil {
			cpu += ", " + met(g.CPUMicrosPerMsg <= 20) + " (the guard alone)"
		}
		fmt.Fprintf(w, "goals: after the first 30 ≥ 99 %% stopped: %s; false positives ≤ 0.1 %%: %s; CPU added ≤ 20 µs/message: %s\n",
			met(f.AfterFirst30Share >= 0.99), met(f.FalsePositiveRate <= 0.001), cpu)
	}
}

// last is the last run of a mode.
func (r FraudResult) last(mode string) (FraudRun, bool) {
	for i := len(r.Runs) - 1; i >= 0; i-- {
		if r.Runs[i].Mode == mode {
			return r.Runs[i], true
		}
	}
	return FraudRun{}, false
}

func rulesText(r FraudResult) string {
	var parts []string
	if v := r.Rules.PerRecipientHourly; v != nil {
		parts = append(parts, fmt.Sprintf("perRecipientHourly %d", *v))
	}
	if v := r.Rules.PerRangeHourly; v != nil {
		parts = append(parts, fmt.Sprintf("perRangeHourly %d", *v))
	}
	if v := r.Rules.BurstFactor; v != nil {
		parts = append(parts, fmt.Sprintf("burstFactor %g", *v))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

func pctOf(n, of int) string {
	return fmt.Sprintf("%d (%.1f %%)", n, 100*share(n, of))
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}

func metIf(measured, ok bool) string {
	if !measured {
		return "not measured (no alert run)"
	}
	return met(ok)
}
