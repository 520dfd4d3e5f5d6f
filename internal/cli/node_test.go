package cli

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/client"
	"github.com/msgsvc/msgsvc/internal/app"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/nodetest"
)

// The command line's tests run it as cmd/msgsvc does, over internal/app's
// node, and the commands that talk to a node talk to one started here.

func runMain(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb, app.Node{})
	return out.String(), errb.String(), code
}

// runCmd runs one command and returns what it printed and its error.
func runCmd(t *testing.T, name string, args ...string) (string, error) {
	t.Helper()
	var out, errs nodetest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := Run(ctx, append([]string{name}, args...), strings.NewReader(""), &out, &errs, app.Node{})
	return out.String() + errs.String(), err
}

// testNode is a dev node on a temporary SQLite database with an account
// and its test key.
type testNode struct {
	base, testKey string
	account       domain.Account
}

func startNode(t *testing.T) *testNode {
	t.Helper()
	srv, err := app.NewServer(context.Background(), nodetest.DevConfig(t.TempDir(), "cli-test", 30*time.Millisecond),
		slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Run(t, "node", srv.Run)
	ctx := context.Background()
	now := time.Now()
	a, err := app.CreateAccount(ctx, srv.Store(), app.NewAccount{Name: "Acme", Tier: "enterprise", Credits: 1000, Currency: "USD", Country: "55"}, now)
	if err != nil {
		t.Fatal(err)
	}
	key, _, err := app.CreateKey(ctx, srv.Store(), a.ID, "test", now)
	if err != nil {
		t.Fatal(err)
	}
	return &testNode{base: "http://" + srv.Addr(), testKey: key.Secret, account: a}
}

// send sends through the node's API and returns the message's id.
func (n *testNode) send(t *testing.T, req client.SendRequest) string {
	t.Helper()
	out, err := client.New(n.base, n.testKey).Send(context.Background(), req)
	if err != nil || len(out.Messages) != 1 {
		t.Fatalf("send: %v %+v", err, out)
	}
	return out.Messages[0].MessageID
}
