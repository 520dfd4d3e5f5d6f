package client_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/app"
	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// TestMain runs every test and example against a real msgsvc node (the
// same server `msgsvc dev` runs, on a temporary SQLite database) and tells
// the examples where it is the way an integrator's program would be told:
// MSGSVC_URL, MSGSVC_API_KEY and MSGSVC_WEBHOOK_SECRET.
func TestMain(m *testing.M) {
	stop, err := startNode()
	if err != nil {
		fmt.Fprintln(os.Stderr, "start a msgsvc node for the client tests:", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func startNode() (func(), error) {
	dir, err := os.MkdirTemp("", "msgsvc-client-test-")
	if err != nil {
		return nil, err
	}
	cfg := config.Config{Dev: true, DB: filepath.Join(dir, "msgsvc.db"), DataDir: dir, Addr: "127.0.0.1:0",
		WebhookAllowPrivate: true, SimulatorDelay: 20 * time.Millisecond,
		WebhookRetrySchedule: webhook.Schedule{50 * time.Millisecond, 100 * time.Millisecond},
		RateLimitBackend:     "memory", NodeID: "client-test", DispatchWorkers: 2, ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := app.NewServer(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), app.Options{})
	if err != nil {
		cancel()
		os.RemoveAll(dir)
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	stop := func() {
		cancel()
		<-done
		os.RemoveAll(dir)
	}
	st, now := srv.Store(), time.Now()
	acc, err := app.CreateAccount(ctx, st, app.NewAccount{Name: "Client tests", Tier: "enterprise", Credits: 1000, Currency: "USD", Country: "55"}, now)
	if err == nil {
		err = st.SetLimits(ctx, acc.ID, domain.Limits{})
	}
	var test, live string
	for _, k := range []struct {
		env string
		out *string
	}{{"test", &test}, {"live", &live}} {
		if err == nil {
			key, _, e := app.CreateKey(ctx, st, acc.ID, k.env, now)
			*k.out, err = key.Secret, e
		}
	}
	if err != nil {
		stop()
		return nil, err
	}
	for k, v := range map[string]string{"MSGSVC_URL": "http://" + srv.Addr(), "MSGSVC_API_KEY": test,
		"MSGSVC_LIVE_KEY": live, "MSGSVC_WEBHOOK_SECRET": acc.WebhookSecret} {
		os.Setenv(k, v)
	}
	return stop, nil
}
