package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/client"
)

// apiFlags are the flags of the commands that talk to a running node
// through its public API, like an integrator's program.
type apiFlags struct {
	url, key *string
	version  string // of this binary, in the client's User-Agent
}

func addAPIFlags(fs *flag.FlagSet, node Node) apiFlags {
	def := os.Getenv("MSGSVC_URL")
	if def == "" {
		def = "http://127.0.0.1:8080"
	}
	return apiFlags{
		url:     fs.String("url", def, "base URL of the running node [MSGSVC_URL]"),
		key:     fs.String("key", os.Getenv("MSGSVC_API_KEY"), "API key, svc_test_… or svc_live_… [MSGSVC_API_KEY]"),
		version: node.VersionInfo()["version"],
	}
}

func (f apiFlags) client() (*client.Client, error) {
	if *f.key == "" {
		return nil, errors.New("no API key: pass --key svc_test_… or set MSGSVC_API_KEY (msgsvc dev printed a test key at its " +
			"first start; msgsvc key create --account ID --env test makes another)")
	}
	return client.New(*f.url, *f.key, client.WithUserAgent("msgsvc-cli/"+f.version)), nil
}

// explain turns a client error into one that says what to do next.
func explain(base string, err error) error {
	var apiErr *client.Error
	var netErr *net.OpError
	// The client's errors start with its name; the command's are printed
	// after "msgsvc: " already.
	text := strings.TrimPrefix(err.Error(), "msgsvc: ")
	switch {
	case errors.As(err, &netErr):
		return fmt.Errorf("cannot reach msgsvc at %s (%v): is `msgsvc dev` running? Point --url (or MSGSVC_URL) at it", base, netErr.Err)
	case client.HasCode(err, client.CodeInvalidAPIKey), client.HasCode(err, client.CodeMissingAPIKey):
		return fmt.Errorf("%s\nuse the test key msgsvc dev printed, or make one: msgsvc key create --account ID --env test", text)
	case client.HasCode(err, client.CodeInsufficientCredits):
		return fmt.Errorf("%s\ntop up: msgsvc credits add --account ID --amount 100 (or send with a svc_test_ key, which is never charged)", text)
	case errors.As(err, &apiErr) && apiErr.Code == client.CodeValidation && len(apiErr.Fields) > 0:
		var b strings.Builder
		b.WriteString("the node refused the message:")
		for _, f := range apiErr.Fields {
			fmt.Fprintf(&b, "\n  --%s: %s", flagOf(f.Field), f.Message)
		}
		return errors.New(b.String())
	}
	return errors.New(text)
}

// flagOf names the flag that sets an API field.
func flagOf(field string) string {
	switch {
	case field == "message":
		return "message"
	case field == "to" || strings.HasPrefix(field, "recipients"):
		return "to"
	case field == "callbackUrl":
		return "callback-url"
	}
	return field
}

// runSend is `msgsvc send`: one send through the public API and, with
// --wait, a live line that follows the messages to their final status.
func runSend(ctx context.Context, node Node, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("msgsvc send", stdout, stderr, "msgsvc send — send a message through a running node's API",
		`msgsvc send --to 5511999990000 --message "Hello" --wait`)
	api := addAPIFlags(fs, node)
	to := fs.String("to", "", "recipient, digits with the country code first, one leading + allowed (several: comma-separated) (required)")
	text := fs.String("message", "", "the text (required)")
	typ := fs.String("type", "SMS", "SMS, WHATSAPP or RCS")
	from := fs.String("from", "", "sender ID or number (one of the account's approved senders)")
	ref := fs.String("reference", "", "your own id for the message, echoed back")
	callback := fs.String("callback-url", "", "where to post the webhooks (e.g. the URL msgsvc listen shows)")
	wait := fs.Bool("wait", false, "follow the messages until each reaches a final status")
	timeout := fs.Duration("timeout", 2*time.Minute, "with --wait: how long to follow")
	asJSON := fs.Bool("json", false, "print the API's answers as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *to == "" || *text == "" {
		return errors.New("--to and --message are required, e.g. msgsvc send --to 5511999990000 --message \"Hello\"")
	}
	c, err := api.client()
	if err != nil {
		return err
	}
	req := client.SendRequest{Message: *text, Type: strings.ToUpper(*typ), From: *from, Reference: *ref, CallbackURL: *callback}
	if rs := strings.Split(*to, ","); len(rs) > 1 {
		req.Recipients = rs
	} else {
		req.To = *to
	}
	out, err := c.Send(ctx, req)
	if err != nil {
		return explain(*api.url, err)
	}
	if !*wait {
		return printSent(stdout, out, *asJSON)
	}
	var p *progress
	if *asJSON {
		// One JSON document at the end, nothing before it.
		p = newProgress(io.Discard, false)
	} else {
		_ = printSent(stdout, out, false)
		p = newProgress(stdout, isTerminal(stdout))
	}
	wctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	final, err := follow(wctx, c, out, p, sleepCtx)
	if *asJSON {
		if perr := printJSON(stdout, map[string]any{"sent": out, "messages": final}); perr != nil {
			return perr
		}
	}
	if err != nil {
		return explain(*api.url, err)
	}
	return nil
}

func printSent(w io.Writer, out *client.SendResponse, asJSON bool) error {
	if asJSON {
		return printJSON(w, out)
	}
	for _, m := range out.Messages {
		fmt.Fprintf(w, "accepted %s to %s: %d segment(s), %s, %g credit(s)\n", m.MessageID, m.To, m.Segments, m.Encoding, m.Credits)
	}
	fmt.Fprintf(w, "campaign %s, %g credit(s) in all\n", out.CampaignID, out.Credits)
	return nil
}

// printJSON writes v as one JSON document, with the API's null where the
// client's types hold a zero time (the Go client keeps dates as
// time.Time, which encodes "no date" as year 1).
func printJSON(w io.Writer, v any) error {
	raw, err := json.Marshal(v)
	if err != nil {
		return err
	}
	var doc any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(nullZeroTimes(doc))
}

const zeroTime = "0001-01-01T00:00:00Z"

func nullZeroTimes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = nullZeroTimes(e)
		}
	case []any:
		for i, e := range t {
			t[i] = nullZeroTimes(e)
		}
	case string:
		if t == zeroTime {
			return nil
		}
	}
	return v
}

// Polling pace of follow: quick at first, since a message usually moves
// within a second, then slower, doubling up to every 15 s, so that the
// send and the polls of any minute stay within even the Free tier's 10
// requests a minute.
const (
	firstPoll = 250 * time.Millisecond
	maxPoll   = 15 * time.Second
)

// follow polls the messages until each reaches a final status, showing
// progress, and returns them in send order; it fails when one failed or
// was canceled, or when ctx ends. A 429 RATE_LIMITED is waited out for
// its Retry-After rather than ending the command. sleep waits, until ctx
// ends at the latest (tests pass their own).
func follow(ctx context.Context, c *client.Client, out *client.SendResponse, p *progress, sleep func(context.Context, time.Duration)) ([]*client.Message, error) {
	last := map[string]*client.Message{}
	pause := firstPoll
	for {
		wait, err := pollOnce(ctx, c, out, last, p)
		if err != nil {
			p.end()
			if ctx.Err() != nil {
				return inOrder(last, out), stillOpen(last, out)
			}
			return inOrder(last, out), err
		}
		if wait == 0 && allFinal(last, out) {
			p.end()
			return inOrder(last, out), outcome(last)
		}
		if wait == 0 {
			wait, pause = pause, min(pause*2, maxPoll)
		}
		sleep(ctx, wait)
		if ctx.Err() != nil {
			p.end()
			return inOrder(last, out), stillOpen(last, out)
		}
	}
}

// pollOnce asks for each message not yet final. It returns how long to
// wait when the node refused for the rate limit (0 otherwise).
func pollOnce(ctx context.Context, c *client.Client, out *client.SendResponse, last map[string]*client.Message, p *progress) (time.Duration, error) {
	for _, s := range out.Messages {
		if m := last[s.MessageID]; m != nil && client.Final(m.Status) {
			continue
		}
		m, err := c.Message(ctx, s.MessageID)
		var apiErr *client.Error
		if errors.As(err, &apiErr) && apiErr.Code == client.CodeRateLimited {
			return max(apiErr.RetryAfter, time.Second), nil
		}
		if err != nil {
			return 0, err
		}
		last[s.MessageID] = m
		p.show(m)
	}
	return 0, nil
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func allFinal(last map[string]*client.Message, out *client.SendResponse) bool {
	for _, s := range out.Messages {
		if m := last[s.MessageID]; m == nil || !client.Final(m.Status) {
			return false
		}
	}
	return true
}

func inOrder(last map[string]*client.Message, out *client.SendResponse) []*client.Message {
	ms := []*client.Message{}
	for _, s := range out.Messages {
		if m := last[s.MessageID]; m != nil {
			ms = append(ms, m)
		}
	}
	return ms
}

// outcome fails if any message did not arrive.
func outcome(msgs map[string]*client.Message) error {
	var failed []string
	for _, m := range msgs {
		if m.Status == client.StatusFailed || m.Status == client.StatusCanceled {
			failed = append(failed, fmt.Sprintf("%s to %s: %s %s %s", m.MessageID, m.To, m.Status, m.ErrorCode, m.ErrorMessage))
		}
	}
	if len(failed) > 0 {
		sort.Strings(failed)
		return errors.New("not delivered:\n  " + strings.Join(failed, "\n  "))
	}
	return nil
}

func stillOpen(msgs map[string]*client.Message, out *client.SendResponse) error {
	var open []string
	for _, s := range out.Messages {
		status := "unknown"
		if m := msgs[s.MessageID]; m != nil {
			status = m.Status
		}
		if !client.Final(status) {
			open = append(open, s.MessageID+" ("+status+")")
		}
	}
	return fmt.Errorf("stopped following before a final status of %s; read it later with GET /api/v1/integration/messages/{id}",
		strings.Join(open, ", "))
}

// newFlags is a command's flag set: mistakes go to stderr, and -h prints
// the command's summary, an example and its flags to stdout.
func newFlags(name string, stdout, stderr io.Writer, summary, example string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "%s\n\nExample:\n  %s\n\nFlags:\n", summary, example)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
	}
	return fs
}
