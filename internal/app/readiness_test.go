package app

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
)

// A reload that would take routes away by accident is refused, the node
// keeps its routes and /readyz says so: an empty file (what a truncating
// editor leaves on disk when SIGHUP comes), and a file that leaves a
// channel with no route it had. Forced, the second is put in use. A route
// limited to an account that does not exist is refused too (issue 35
// items 7, 9 and 14).
func TestReloadRefusesToDropRoutes(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		smsc := smpptest.Start(t)
		wa := whatsapptest.New(t)
		path := filepath.Join(t.TempDir(), "msgsvc.yaml")
		providers := fmt.Sprintf(`providers:
  - {name: carrier, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret}}
  - name: whatsapp
    type: whatsapp
    whatsapp: {token: t, phoneNumberId: "106540352242922", appSecret: s, verifyToken: v, apiUrl: %q}
`, smsc.Addr(), wa.URL)
		write := func(text string) {
			t.Helper()
			if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		both := providers + "routes:\n  - {channel: SMS, primary: carrier}\n  - {channel: WHATSAPP, primary: whatsapp}\n"
		write(both)
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, config: func(c *config.Config) { c.Dev, c.Config = false, path }})
		polltest.For(t, "the carrier bound", 10*time.Second, func() bool { return smsc.Binds() == 1 })
		operator := e.member("operator")
		refused := func(what, state, detail string) {
			t.Helper()
			if m := sendOne(t, e, "46700000021"); m.Provider != "carrier" || m.Status != domain.Delivered {
				t.Fatalf("%s: the running routes changed: %+v", what, m)
			}
			ready := e.do("GET", "/readyz", "", nil)
			if body := ready.json(t); ready.status != http.StatusOK || body["status"] != "degraded" || !strings.HasPrefix(fmt.Sprint(body["config"]), state) {
				t.Fatalf("%s: /readyz %d %s", what, ready.status, ready.body)
			}
			if c := fmt.Sprint(e.mg("GET", "/readyz", operator, nil).json(t)["config"]); !strings.Contains(c, detail) {
				t.Fatalf("%s: /readyz for an operator: config %q, want %q", what, c, detail)
			}
		}

		write("")
		if err := e.srv.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), "the file has no routes") {
			t.Fatalf("empty file: %v", err)
		}
		refused("empty file", "reload failed", "the file has no routes")

		write(providers + "routes:\n  - {channel: WHATSAPP, primary: whatsapp}\n")
		err := e.srv.Reload(context.Background())
		if !errors.Is(err, errRoutesLost) || !strings.Contains(err.Error(), "(SMS)") {
			t.Fatalf("SMS routes dropped: %v", err)
		}
		refused("SMS routes dropped", "reload refused", "SIGUSR2")

		write(both + "  - {name: vip, channel: SMS, primary: carrier, accounts: [acc_nobody]}\n")
		if err := e.srv.Reload(context.Background()); err == nil || !strings.Contains(err.Error(), `route "vip" no account has the id "acc_nobody"`) {
			t.Fatalf("unknown account: %v", err)
		}
		refused("unknown account", "reload failed", "acc_nobody")

		write(both + fmt.Sprintf("  - {name: vip, channel: SMS, primary: carrier, accounts: [%s]}\n", e.account.ID))
		if err := e.srv.Reload(context.Background()); err != nil {
			t.Fatalf("a known account: %v", err)
		}
		if r := e.do("GET", "/readyz", "", nil).json(t); r["config"] != "ok" || r["status"] != "ok" {
			t.Fatalf("/readyz after a good reload: %v", r)
		}

		write(providers + "routes:\n  - {channel: WHATSAPP, primary: whatsapp}\n")
		if err := e.srv.ForceReload(context.Background()); err != nil {
			t.Fatalf("forced: %v", err)
		}
		if m := sendOne(t, e, "46700000022"); m.Status != domain.Failed || m.ErrorCode != "NO_ROUTE" {
			t.Fatalf("after the forced reload: %+v", m)
		}
	})
}

// Strangers see each part of /readyz as a state only; an operator's
// session sees the details (issue 35 item 8).
func TestReadyzTellsStrangersStatesOnly(t *testing.T) {
	smsc := smpptest.Start(t)
	path := filepath.Join(t.TempDir(), "msgsvc.yaml")
	if err := os.WriteFile(path, fmt.Appendf(nil, "providers:\n  - {name: carrier, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret}}\n"+
		"routes:\n  - {channel: SMS, primary: carrier}\n", smsc.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, "sqlite", envOptions{config: func(c *config.Config) { c.Dev, c.Config = false, path }})
	polltest.For(t, "the carrier bound", 10*time.Second, func() bool { return smsc.Binds() == 1 })
	// A rejected rate card: its path is all the error may say of it.
	rates := filepath.Join(filepath.Dir(path), "rates.csv")
	if err := os.WriteFile(rates, []byte("44\x00\xff\xfe,\x1b[2Jsecret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fmt.Appendf(nil, "providers:\n  - {name: carrier, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret}, costs: rates.csv}\n"+
		"routes:\n  - {channel: SMS, primary: carrier}\n", smsc.Addr()), 0o600); err != nil {
		t.Fatal(err)
	}
	_ = e.srv.Reload(context.Background())
	_, port, _ := strings.Cut(smsc.Addr(), ":")
	for _, token := range []string{"", "sess_not-a-session", e.member("viewer")} {
		r := e.mg("GET", "/readyz", token, nil)
		if strings.Contains(string(r.body), port) || strings.Contains(string(r.body), "rates.csv") {
			t.Fatalf("/readyz to a stranger (%q) tells details: %s", token, r.body)
		}
		for part, v := range r.json(t) {
			if s := fmt.Sprint(v); strings.Contains(s, ":") {
				t.Errorf("/readyz to a stranger: %s = %q", part, s)
			}
		}
		if body := r.json(t); body["provider:carrier"] != "ok" || body["status"] != "degraded" {
			t.Errorf("/readyz to a stranger: %s", r.body)
		}
	}
	r := e.mg("GET", "/readyz", e.member("operator"), nil)
	if !strings.Contains(string(r.body), "rates.csv") || !strings.Contains(string(r.body), "binds up") {
		t.Fatalf("/readyz to an operator: %s", r.body)
	}
	if strings.Contains(string(r.body), "\x1b") || strings.Contains(string(r.body), "\\u001b") {
		t.Fatalf("/readyz to an operator quotes the file's raw bytes: %s", r.body)
	}
}
