package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/polltest"
	"github.com/msgsvc/msgsvc/internal/provider/smpp/smpptest"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
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
	file := func(systemID, route string) string {
		return fmt.Sprintf(reloadConfig, one.Addr(), two.Addr(), systemID, route)
	}
	e := newEnv(t, "sqlite", envOptions{poll: 20 * time.Millisecond, file: file("msgsvc", "one, two")})
	polltest.For(t, "both bound", 10*time.Second, func() bool { return one.Binds() == 1 && two.Binds() == 1 })
	if m := sendOne(t, e, "46700000011"); m.Provider != "one" {
		t.Fatalf("before the reload: %s", m.Provider)
	}

	e.file.write(file("msgsvc", "two, one")) // routes only
	if err := e.srv.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	if m := sendOne(t, e, "46700000012"); m.Provider != "two" {
		t.Fatalf("after the reload: %s", m.Provider)
	}
	if one.Binds() != 1 || two.Binds() != 1 {
		t.Fatalf("unchanged providers rebound: %d, %d binds", one.Binds(), two.Binds())
	}

	e.file.write("providers:\n  - {name: one, type: smpp}\nroutes: [{channel: SMS, providers: [nobody]}]\n")
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

	e.file.write(file("other", "two")) // two's settings change: it binds again; one keeps its bind
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
	f := newConfigFile(t, "")
	good := f.beside("good.yaml", []byte("providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}, costs: {'44': 0.03}}\n"+
		"routes:\n  - {channel: SMS, providers: [a], strategy: least-cost}\n"))
	bad := f.beside("bad.yaml", []byte("routes:\n  - {channel: SMS, providers: [a], strategy: cheapest}\n"))
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
		providers := fmt.Sprintf(`providers:
  - {name: carrier, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret}}
  - name: whatsapp
    type: whatsapp
    whatsapp: {token: t, phoneNumberId: "106540352242922", appSecret: s, verifyToken: v, apiUrl: %q}
`, smsc.Addr(), wa.URL)
		both := providers + "routes:\n  - {channel: SMS, primary: carrier}\n  - {channel: WHATSAPP, primary: whatsapp}\n"
		e := newEnv(t, d, envOptions{poll: 20 * time.Millisecond, file: both})
		write := e.file.write
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
	e := newEnv(t, "sqlite", envOptions{file: fmt.Sprintf("providers:\n  - {name: carrier, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret}}\n"+
		"routes:\n  - {channel: SMS, primary: carrier}\n", smsc.Addr())})
	polltest.For(t, "the carrier bound", 10*time.Second, func() bool { return smsc.Binds() == 1 })
	// A rejected rate card: its path is all the error may say of it.
	e.file.beside("rates.csv", []byte("44\x00\xff\xfe,\x1b[2Jsecret\n"))
	e.file.write(fmt.Sprintf("providers:\n  - {name: carrier, type: smpp, smpp: {addr: %q, systemId: msgsvc, password: secret}, costs: rates.csv}\n"+
		"routes:\n  - {channel: SMS, primary: carrier}\n", smsc.Addr()))
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
