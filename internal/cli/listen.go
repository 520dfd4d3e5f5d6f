package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/msgsvc/msgsvc/client"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// runListen is `msgsvc listen`: a local webhook receiver for development.
// It verifies each webhook as an integrator's receiver must, prints it
// readably, points out what integrators trip over (duplicates, statuses
// arriving out of order, a wrong secret) and can forward each webhook to
// the integrator's own application.
func runListen(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("msgsvc listen", stdout, stderr, "msgsvc listen — receive, verify and print webhooks (and forward them to your application)",
		"msgsvc listen --secret whsec_… --forward-to http://127.0.0.1:3000/webhooks")
	addr := fs.String("addr", "127.0.0.1:9000", "address to listen on")
	secret := fs.String("secret", os.Getenv("MSGSVC_WEBHOOK_SECRET"), "the account's webhook signing secret, whsec_… [MSGSVC_WEBHOOK_SECRET]")
	forward := fs.String("forward-to", "", "also POST each verified webhook, headers and body unchanged, to this URL (your application)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *secret != "" {
		if _, err := webhook.DecodeSecret(*secret); err != nil || !strings.HasPrefix(*secret, webhook.SecretPrefix) {
			return errors.New("--secret must be the whsec_… secret that msgsvc dev (or msgsvc account create) printed, whole")
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (is another msgsvc listen running? choose another with --addr)", *addr, err)
	}
	l := newListener(stdout, isTerminal(stdout), *secret, *forward)
	srv := &http.Server{Handler: l, ReadHeaderTimeout: 5 * time.Second}
	l.banner("http://" + ln.Addr().String())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		// Ctrl-C: let webhooks being received finish, briefly; a
		// connection msgsvc just opened must not hold the terminal.
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := srv.Shutdown(sctx); err != nil {
			return srv.Close()
		}
		return nil
	}
}

// listener is the receiver behind msgsvc listen.
type listener struct {
	out      io.Writer
	tty      bool
	verifier *client.Verifier
	forward  string
	http     *http.Client

	mu     sync.Mutex
	seen   map[string]bool   // webhook-ids received
	status map[string]string // message id → furthest status received
}

func newListener(out io.Writer, tty bool, secret, forward string) *listener {
	l := &listener{out: out, tty: tty, forward: forward, http: &http.Client{Timeout: 10 * time.Second},
		seen: map[string]bool{}, status: map[string]string{}}
	if secret != "" {
		l.verifier = &client.Verifier{Secrets: []string{secret}}
	}
	return l
}

func (l *listener) banner(base string) {
	fmt.Fprintf(l.out, "msgsvc listen: receiving webhooks at %s/hooks (any path works)\n", base)
	fmt.Fprintf(l.out, "  send with  \"callbackUrl\": \"%s/hooks\"  (or: msgsvc send --callback-url %s/hooks …)\n", base, base)
	if l.verifier == nil {
		fmt.Fprintln(l.out, "  signatures are NOT checked: pass --secret whsec_… (msgsvc dev prints it) to check them as your receiver must")
	} else {
		fmt.Fprintln(l.out, "  signatures are checked with the secret given")
	}
	if l.forward != "" {
		fmt.Fprintf(l.out, "  verified webhooks are forwarded to %s; its answer is msgsvc's answer\n", l.forward)
	}
	fmt.Fprintln(l.out)
}

func (l *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		http.Error(w, "msgsvc listen takes webhooks: POST", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, "unreadable body", http.StatusBadRequest)
		return
	}
	at := time.Now().Format("15:04:05.000")
	if l.verifier != nil {
		if err := l.verifier.Verify(r.Header, body); err != nil {
			l.printf("%s  %s  %v\n", at, l.red("REFUSED"), err)
			// 401 makes msgsvc retry, as a real receiver's refusal would.
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
	}
	ev, err := client.ParseWebhook(r.Header, body)
	if err != nil {
		l.printf("%s  %s  %v\n", at, l.red("NOT AN EVENT"), err)
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	note := l.remember(ev)
	l.printf("%s  %s%s\n", at, l.describe(ev), note)
	status := http.StatusNoContent
	if l.forward != "" {
		status = l.relay(r, body)
	}
	w.WriteHeader(status)
}

// remember notes a webhook and says what is unusual about it: a
// duplicate, or a status that arrives after a later one.
func (l *listener) remember(ev client.Event) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.seen[ev.ID] {
		return "  (again: a retry of an event already received; deduplicate on webhook-id)"
	}
	l.seen[ev.ID] = true
	st, err := ev.DeliveryStatus()
	if err != nil {
		return ""
	}
	prev := l.status[st.MessageID]
	if prev != "" && rank(st.Status) < rank(prev) {
		return fmt.Sprintf("  (arrived after %s: a message's webhooks are posted in order, but while one waits for its retry the later ones go ahead;"+
			" keep the furthest status, order by timestamp, or read the events feed, which is always in order)", prev)
	}
	l.status[st.MessageID] = st.Status
	return ""
}

// rank orders statuses by progress; the side exits count as the end.
func rank(status string) int {
	switch status {
	case client.StatusSending:
		return 0
	case client.StatusSent:
		return 1
	case client.StatusDelivered:
		return 2
	}
	return 3
}

// describe is one readable line for an event.
func (l *listener) describe(ev client.Event) string {
	if st, err := ev.DeliveryStatus(); err == nil {
		s := fmt.Sprintf("%s  %s  %-9s  to %s", ev.ID, st.MessageID, paint(l.tty, st.Status), st.Phone)
		if st.ErrorCode != "" {
			s += "  " + st.ErrorCode + ": " + st.ErrorMessage
		}
		return s
	}
	if rec, err := ev.MessageReceived(); err == nil {
		campaign := rec.CampaignID
		if campaign == "" {
			campaign = "no campaign"
		}
		return fmt.Sprintf("%s  reply from %s on %s: %q  (%s)", ev.ID, rec.Phone, rec.Channel, rec.Message, campaign)
	}
	return fmt.Sprintf("%s  %s", ev.ID, ev.Type)
}

// relay forwards a webhook unchanged, so that the application checks the
// same signature, and returns the application's status (502 when it
// cannot be reached, so that msgsvc retries later).
func (l *listener) relay(r *http.Request, body []byte) int {
	req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, l.forward, bytes.NewReader(body))
	if err != nil {
		l.printf("            %s %v\n", l.red("forward failed:"), err)
		return http.StatusBadGateway
	}
	for _, h := range []string{"Content-Type", "User-Agent", "webhook-id", "webhook-timestamp", "webhook-signature", "X-Service-Signature"} {
		if v := r.Header.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	resp, err := l.http.Do(req)
	if err != nil {
		l.printf("            %s %v (msgsvc will retry)\n", l.red("forward failed:"), err)
		return http.StatusBadGateway
	}
	resp.Body.Close()
	l.printf("            → %s answered %d\n", l.forward, resp.StatusCode)
	return resp.StatusCode
}

func (l *listener) red(s string) string {
	if l.tty {
		return "\033[31m" + s + "\033[0m"
	}
	return s
}

func (l *listener) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.out, format, args...)
}
