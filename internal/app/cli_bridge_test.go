package app

import (
	"bytes"
	"context"
	"io"
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
