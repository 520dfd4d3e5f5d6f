package app

import (
	"bytes"
	"context"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/bootstrap"
	"github.com/msgsvc/msgsvc/internal/cli"
	"github.com/msgsvc/msgsvc/internal/nodetest"
)

// The tests of this package drive the command line (internal/cli) against
// the nodes they build, with this package's Node running dev and serve.

func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return cli.Main(args, stdin, stdout, stderr, Node{})
}

func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return out.String(), errb.String(), code
}

func runCmd(t *testing.T, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error, args ...string) (string, error) {
	t.Helper()
	var out, errs nodetest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := run(ctx, args, &out, &errs)
	return out.String() + errs.String(), err
}

func runUsage(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return cli.Run(ctx, append([]string{"usage"}, args...), strings.NewReader(""), stdout, stderr, Node{})
}

func runAdmin(ctx context.Context, group string, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	return cli.Run(ctx, append([]string{group}, args...), stdin, stdout, stderr, Node{})
}

func sqlitePath(dsn string) (string, bool) { return bootstrap.SQLitePath(dsn) }

// dev prints the exact listen command, with the account's secret.
func TestDevPrintsTheListenCommand(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	var out nodetest.Buffer
	if err := devWelcome(context.Background(), e.srv, &out); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(` listen (--addr \S+ )?--secret ` + regexp.QuoteMeta(e.account.WebhookSecret) + "\n").MatchString(out.String()) {
		t.Errorf("dev printed:\n%s", out.String())
	}
}

// Whatever address dev runs on, the commands it prints work as printed:
// send goes to the node, listen gets a port of its own, and the callback
// URL points at listen.
func TestDevCommandsFollowTheAddress(t *testing.T) {
	for _, c := range []struct{ base, listen, callback string }{
		{"http://127.0.0.1:8080", " listen --secret ", "--callback-url http://127.0.0.1:9000/hooks"},
		{"http://127.0.0.1:8081", " listen --addr 127.0.0.1:9001 --secret ", "--callback-url http://127.0.0.1:9001/hooks"},
		{"http://127.0.0.1:3000", " listen --secret ", "--callback-url http://127.0.0.1:9000/hooks"},
		{"http://127.0.0.1:9000", " listen --addr 127.0.0.1:9920 --secret ", "--callback-url http://127.0.0.1:9920/hooks"},
		{"http://127.0.0.1:8080", " listen --secret ", "send --url http://127.0.0.1:8080 "},
		{"http://[::1]:8080", " listen --addr [::1]:9000 --secret ", "--callback-url http://[::1]:9000/hooks"},
	} {
		var out strings.Builder
		printListen(&out, "msgsvc", c.base, "whsec_x", "svc_test_x")
		for _, want := range []string{c.listen, c.callback, "send --url " + c.base + " "} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("dev on %s printed no %q:\n%s", c.base, want, out.String())
			}
		}
	}
	if got := dialable("0.0.0.0:8081"); got != "127.0.0.1:8081" {
		t.Errorf("dialable(0.0.0.0:8081) = %s", got)
	}
	if got := dialable("[::1]:8081"); got != "[::1]:8081" {
		t.Errorf("dialable([::1]:8081) = %s", got)
	}
}
