//go:build unix

package app

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

// serve reloads on SIGHUP.
func TestReloadOnHangup(t *testing.T) {
	one, two := smpptest.Start(t), smpptest.Start(t)
	path := filepath.Join(t.TempDir(), "msgsvc.yaml")
	write := func(route string) {
		t.Helper()
		if err := os.WriteFile(path, fmt.Appendf(nil, reloadConfig, one.Addr(), two.Addr(), "msgsvc", route), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("one")
	e := newEnv(t, "sqlite", envOptions{poll: 20 * time.Millisecond, config: func(c *config.Config) { c.Dev, c.Config = false, path }})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reloadOnHangup(ctx, e.srv, path, slog.New(slog.NewTextHandler(io.Discard, nil)))
	write("two")
	if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	polltest.For(t, "the routes reloaded", 10*time.Second, func() bool {
		r := e.srv.routing.Describe()
		return len(r) == 1 && r[0].Providers[0].Name == "two"
	})
}
