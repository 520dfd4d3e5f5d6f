package app

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/msgsvc/msgsvc/internal/template"
)

// devWelcome creates the demo account on the first start of a dev
// installation and prints what a newcomer needs for a first call. Keys are
// stored only as hashes, so they can be printed this once.
func devWelcome(ctx context.Context, srv *Server, w io.Writer) error {
	st := srv.Store()
	accts, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	base := "http://" + dialable(srv.Addr())
	self := selfCommand()
	if len(accts) > 0 {
		fmt.Fprintf(w, "\nmsgsvc dev is running at %s (docs: %s/docs)\n"+
			"Web panel: %s/ — log in as demo@msgsvc.local with the password printed at first start.\n"+
			"The demo keys were printed at first start too. Lost them? Create a key, or a new panel user:\n"+
			"  %s key create --account %s --env test\n"+
			"  %s user create --account %s --role owner --email you@example.com\n",
			base, base, base, self, accts[0].ID, self, accts[0].ID)
		printListen(w, self, base, accts[0].WebhookSecret, "svc_test_…")
		return nil
	}
	now := srv.now().UTC()
	a, err := CreateAccount(ctx, st, NewAccount{Name: "Demo", Tier: "enterprise", Credits: 1000, Currency: "USD", Country: "1"}, now)
	if err != nil {
		return err
	}
	test, _, err := CreateKey(ctx, st, a.ID, "test", now)
	if err != nil {
		return err
	}
	live, _, err := CreateKey(ctx, st, a.ID, "live", now)
	if err != nil {
		return err
	}
	u, pw, err := CreateUser(ctx, st, a.ID, "demo@msgsvc.local", "owner", "", now)
	if err != nil {
		return err
	}
	tpls := template.New(st, srv.now)
	for _, t := range []template.NewTemplate{
		{Name: "welcome", Language: "en", Category: template.Utility, Body: "Hello {{1}}, welcome to {{2}}!",
			Parameters: []string{"customer name", "company name"}},
		{Name: "order_update", Language: "en", Category: template.Utility, Body: "Your order {{1}} is {{2}}.",
			Parameters: []string{"order number", "order status"}},
	} {
		if _, err := tpls.Create(ctx, a.ID, t); err != nil {
			return fmt.Errorf("demo template %s: %w", t.Name, err)
		}
	}
	fmt.Fprintf(w, `
msgsvc dev is running at %[1]s — API reference: %[1]s/docs

A demo account was created (shown only this once; save these):
  account         %[2]s   (1000 credits, enterprise tier)
  test key        %[3]s
  live key        %[4]s   (routed to the simulator in dev)
  webhook secret  %[5]s

Web panel: %[1]s/   (keys, allow-list, webhook secret, senders, limits, messages, balance)
  login           %[6]s
  password        %[7]s

Try it:
  curl -s %[1]s/api/v1/integration/balance -H "X-API-KEY: %[3]s"
  curl -s %[1]s/api/v1/integration/messages -H "X-API-KEY: %[3]s" \
       -H 'Content-Type: application/json' \
       -d '{"to":"5511999990000","message":"Hello from msgsvc","type":"SMS"}'
`, base, a.ID, test.Secret, live.Secret, a.WebhookSecret, u.Email, pw)
	printListen(w, self, base, a.WebhookSecret, test.Secret)
	return nil
}

// printListen shows the shortest way to a first verified webhook: the
// exact listen command, with the account's signing secret, and a send
// whose webhooks go to it. Both follow the node's address, so that a node
// moved off the default port (or onto listen's) still gets commands that
// work as printed.
func printListen(w io.Writer, self, base, secret, key string) {
	hooks, addrFlag := listenAddrFor(strings.TrimPrefix(base, "http://")), ""
	if hooks != defaultListenAddr {
		addrFlag = " --addr " + hooks
	}
	fmt.Fprintf(w, `
See your webhooks, verified with the account's signing secret (in a second terminal):
  %[1]s listen%[5]s --secret %[3]s
then send a message whose webhooks go there:
  %[1]s send --url %[2]s --key %[4]s --to 5511999990004 --message "Hello" --callback-url http://%[6]s/hooks --wait

`, self, base, secret, key, addrFlag, hooks)
}

// defaultListenAddr is where msgsvc listen receives webhooks by default.
const defaultListenAddr = "127.0.0.1:9000"

// listenAddrFor picks where listen should receive the webhooks of a node
// at nodeAddr: on the node's host, so a node on ::1 gets an IPv6
// receiver, at a port that moves with the node's (8080 → 9000, 8081 →
// 9001), so two dev nodes side by side get a receiver each; never on the
// node's own port.
func listenAddrFor(nodeAddr string) string {
	host, port, err := net.SplitHostPort(nodeAddr)
	if err != nil {
		return defaultListenAddr
	}
	n, err := strconv.Atoi(port)
	if err != nil {
		return defaultListenAddr
	}
	p := n + 920
	if n < 8080 || p > 65535 {
		p = 9000
	}
	if p == n {
		p++
	}
	return net.JoinHostPort(host, strconv.Itoa(p))
}

// dialable is an address a client on this machine can reach the node at:
// a node listening on every interface is reached on loopback.
func dialable(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// selfCommand is how the user can run this program again: its name when
// that is what PATH finds, "go run ./cmd/msgsvc" when go run built it,
// else the path it was started by.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "msgsvc"
	}
	if strings.Contains(exe, string(filepath.Separator)+"go-build") {
		return "go run ./cmd/msgsvc"
	}
	name := filepath.Base(exe)
	if found, err := exec.LookPath(name); err == nil {
		if a, errA := os.Stat(found); errA == nil {
			if b, errB := os.Stat(exe); errB == nil && os.SameFile(a, b) {
				return name
			}
		}
	}
	return os.Args[0]
}
