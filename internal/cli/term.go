package cli

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/client"
)

// isTerminal reports whether w is a terminal that takes colours and line
// rewrites: a character device, and NO_COLOR (no-color.org) not set.
// Piped or redirected output gets plain lines.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// statusColour is the ANSI colour of a status on a terminal.
func statusColour(status string) string {
	switch status {
	case client.StatusSent:
		return "\033[36m" // cyan
	case client.StatusDelivered:
		return "\033[32m" // green
	case client.StatusRead:
		return "\033[1;32m" // bold green
	case client.StatusFailed:
		return "\033[31m" // red
	case client.StatusCanceled:
		return "\033[33m" // yellow
	}
	return ""
}

// paint colours a status when on a terminal.
func paint(tty bool, status string) string {
	if c := statusColour(status); tty && c != "" {
		return c + status + "\033[0m"
	}
	return status
}

// progress shows how the messages of a send move. On a terminal it keeps
// one line up to date; elsewhere it prints a line per status change, which
// reads well in logs and scripts.
type progress struct {
	w      io.Writer
	tty    bool
	start  time.Time
	seen   map[string]string // message id → last status shown
	order  []string
	drawn  bool
	latest map[string]*client.Message
}

func newProgress(w io.Writer, tty bool) *progress {
	return &progress{w: w, tty: tty, start: time.Now(), seen: map[string]string{}, latest: map[string]*client.Message{}}
}

func (p *progress) show(m *client.Message) {
	if _, ok := p.seen[m.MessageID]; !ok {
		p.order = append(p.order, m.MessageID)
	}
	p.latest[m.MessageID] = m
	changed := p.seen[m.MessageID] != m.Status
	p.seen[m.MessageID] = m.Status
	if !p.tty {
		if changed {
			fmt.Fprintf(p.w, "%s %s%s\n", m.MessageID, m.Status, failure(m))
		}
		return
	}
	fmt.Fprintf(p.w, "\r\033[K%s", p.line())
	p.drawn = true
}

// line is the live line: the path of a single message, or counts per
// status for a batch.
func (p *progress) line() string {
	took := time.Since(p.start).Round(100 * time.Millisecond)
	if len(p.order) == 1 {
		m := p.latest[p.order[0]]
		var steps []string
		for _, h := range m.History {
			steps = append(steps, paint(true, h.Status))
		}
		return fmt.Sprintf("%s  %s%s  (%s)", m.MessageID, strings.Join(steps, " → "), failure(m), took)
	}
	counts := map[string]int{}
	for _, id := range p.order {
		counts[p.latest[id].Status]++
	}
	var parts []string
	for st, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, paint(true, st)))
	}
	sort.Strings(parts)
	return fmt.Sprintf("%d messages: %s  (%s)", len(p.order), strings.Join(parts, ", "), took)
}

// end finishes the live line.
func (p *progress) end() {
	if p.tty && p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

func failure(m *client.Message) string {
	if m.ErrorCode == "" {
		return ""
	}
	return " " + m.ErrorCode + ": " + m.ErrorMessage
}
