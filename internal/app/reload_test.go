package app

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
)

const reloadConfig = `providers:
  - {name: one, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret}}
  - {name: two, type: smpp, smpp: {addr: %q, systemId: %s, password: secret}}
routes:
  - {channel: SMS, providers: [%s]}
`

// A reload keeps the binds of providers it does not change, rebinds the
// one it changes, applies new routes at once, and an invalid file changes
// nothing but is visible in /readyz and the metrics.
func TestReloadKeepsBindsAndTheRunningConfiguration(t *testing.T) {
	one, two := smpptest.Start(t), smpptest.Start(t)
	path := filepath.Join(t.TempDir(), "msgsvc.yaml")
	write := func(systemID, route string) {
		t.Helper()
		if err := os.WriteFile(path, fmt.Appendf(nil, reloadConfig, one.Addr(), two.Addr(), systemID, route), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("msgsvc", "one, two")
	e := newEnv(t, "sqlite", envOptions{poll: 20 * time.Millisecond, config: func(c *config.Config) { c.Dev, c.Config = false, path }})
	polltest.For(t, "both bound", 10*time.Second, func() bool { return one.Binds() == 1 && two.Binds() == 1 })
	if m := sendOne(t, e, "46700000011"); m.Provider != "one" {
		t.Fatalf("before the reload: %s", m.Provider)
	}

	write("msgsvc", "two, one") // routes only
	if err := e.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := sendOne(t, e, "46700000012"); m.Provider != "two" {
		t.Fatalf("after the reload: %s", m.Provider)
	}
	if one.Binds() != 1 || two.Binds() != 1 {
		t.Fatalf("unchanged providers rebound: %d, %d binds", one.Binds(), two.Binds())
	}

	if err := os.WriteFile(path, []byte("providers:\n  - {name: one, type: smpp}\nroutes: [{channel: SMS, providers: [nobody]}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	err := e.srv.Reload(context.Background())
	if err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Fatalf("invalid file: %v", err)
	}
	ready := e.do("GET", "/readyz", "", nil).json(t)
	if c := fmt.Sprint(ready["config"]); !strings.Contains(c, "running the previous configuration") || ready["status"] != "degraded" {
		t.Fatalf("/readyz after a failed reload: %v", ready)
	}
	if v := metricValue(t, e, "msgsvc_config_last_reload_ok"); v != 0 {
		t.Fatalf("msgsvc_config_last_reload_ok %v", v)
	}
	if m := sendOne(t, e, "46700000013"); m.Provider != "two" || m.Status != domain.Delivered {
		t.Fatalf("the running configuration changed: %+v", m)
	}

	write("other", "two") // two's settings change: it binds again; one keeps its bind
	if err := e.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	polltest.For(t, "two bound again", 10*time.Second, func() bool { return two.Binds() == 2 })
	if m := sendOne(t, e, "46700000014"); m.Provider != "two" || m.Status != domain.Delivered {
		t.Fatalf("after rebinding: %+v", m)
	}
	if ready := e.do("GET", "/readyz", "", nil).json(t); ready["config"] != "ok" || one.Binds() != 1 {
		t.Fatalf("/readyz after a good reload: %v", ready)
	}
	if v := metricValue(t, e, "msgsvc_config_last_reload_ok"); v != 1 {
		t.Fatalf("msgsvc_config_last_reload_ok %v", v)
	}
}

func TestConfigCheck(t *testing.T) {
	dir := t.TempDir()
	good, bad := filepath.Join(dir, "good.yaml"), filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(good, []byte("providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}, costs: {'44': 0.03}}\n"+
		"routes:\n  - {channel: SMS, providers: [a], strategy: least-cost}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("routes:\n  - {channel: SMS, providers: [a], strategy: cheapest}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"config", "check", good}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "ok (1 providers, 1 routes)") {
		t.Fatalf("good file: %d %q %q", code, out.String(), errOut.String())
	}
	out.Reset()
	errOut.Reset()
	if code := Main([]string{"config", "check", bad}, nil, &out, &errOut); code != 1 ||
		!strings.Contains(errOut.String(), "bad.yaml:2: routes[0].strategy") || !strings.Contains(errOut.String(), "no provider is named") {
		t.Fatalf("bad file: %d %q", code, errOut.String())
	}
}
