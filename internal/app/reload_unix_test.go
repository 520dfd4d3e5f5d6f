//go:build unix

package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// serve reloads on SIGHUP.
func TestReloadOnHangup(t *testing.T) {
	one, two := smpptest.Start(t), smpptest.Start(t)
	file := func(route string) string { return fmt.Sprintf(reloadConfig, one.Addr(), two.Addr(), "msgsvc", route) }
	e := newEnv(t, "sqlite", envOptions{poll: 20 * time.Millisecond, file: file("one")})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reloadOnHangup(ctx, e.srv, e.file.path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	e.file.write(file("two"))
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	polltest.For(t, "the routes reloaded", 10*time.Second, func() bool {
		r := e.srv.routing.Describe()
		return len(r) == 1 && r[0].Providers[0].Name == "two"
	})
}
