package routing

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/rbm"
	"github.com/msgsvc/msgsvc/internal/provider/smpp"
	"github.com/msgsvc/msgsvc/internal/provider/telnyx"
	"github.com/msgsvc/msgsvc/internal/provider/twilio"
	"github.com/msgsvc/msgsvc/internal/provider/vonage"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// registry is the adapter types the service runs.
// fromEnv is FromEnv with no file and the variables vars; it fails the
// test on an error.
func fromEnv(t *testing.T, vars map[string]string) Config {
	t.Helper()
	c, err := FromEnv(Config{}, env(vars), registry(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// refused fails the test unless err is a refusal that says each of want.
func refused(t *testing.T, name string, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: accepted", name)
		return
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not say %q", name, err, w)
		}
	}
}

func registry(t *testing.T) *provider.Registry {
	t.Helper()
	r, err := provider.NewRegistry(smpp.Type(), whatsapp.Type(), rbm.Type(), twilio.Type(), telnyx.Type(), vonage.Type())
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func smppOf(p Provider) smpp.Config { c, _ := p.Settings.(smpp.Config); return c }

func rbmOf(p Provider) rbm.Config { c, _ := p.Settings.(rbm.Config); return c }

// loadExample loads the example file shipped in the repository, with its
// secrets set.
func loadExample(t *testing.T) Config {
	t.Helper()
	secrets := env(map[string]string{"CARRIER_A_PASSWORD": "a", "CARRIER_B_PASSWORD": "b", "WHATSAPP_TOKEN": "t",
		"WHATSAPP_APP_SECRET": "s", "WHATSAPP_VERIFY_TOKEN": "v", "RBM_CLIENT_TOKEN": "c", "TWILIO_AUTH_TOKEN": "tw",
		"TELNYX_API_KEY": "KEY1", "TELNYX_PUBLIC_KEY": "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=", "VONAGE_API_SECRET": "vs",
		"VONAGE_SIGNATURE_SECRET": "vss"})
	c, err := Load("../../msgsvc.example.yaml", secrets, registry(t))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The example shipped in the repository must stay valid.
func TestExampleFile(t *testing.T) {
	c := loadExample(t)
	if len(c.Providers) != 7 || len(c.Routes) != 6 || smppOf(c.Providers[0]).Password != "a" || c.Providers[0].line != 15 ||
		c.Providers[0].Costs.Len() != 4 || c.Routes[0].Strategy != "least-cost" || c.Currency != "USD" {
		t.Fatalf("example read as %+v", c)
	}
	if u := c.Unrouted(); len(u) != 0 {
		t.Fatalf("unrouted %v", u)
	}
}

// Each provider's own sender, which a message that names none goes out
// from (and which an account may hold), is read from its block.
func TestOwnSenders(t *testing.T) {
	c := loadExample(t)
	want := map[string]string{"carrier-a": "Acme", "carrier-b": "", "whatsapp": "15550001234", "rbm": "acme-agent",
		"twilio": "+15017122661", "telnyx": "", "vonage": "AcmeInc"}
	for _, p := range c.Providers {
		got, only := provider.OwnSenderOf(p.Settings)
		if got != want[p.Name] || only != (p.Type == "whatsapp") {
			t.Errorf("%s: own sender %q (every message: %v), want %q", p.Name, got, only, want[p.Name])
		}
	}
	// A WhatsApp provider without its number is known by the number's id;
	// the number is digits only.
	c, err := FromEnv(Config{}, env(map[string]string{"MSGSVC_WHATSAPP_TOKEN": "t", "MSGSVC_WHATSAPP_PHONE_NUMBER_ID": "106540352242922",
		"MSGSVC_WHATSAPP_APP_SECRET": "s", "MSGSVC_WHATSAPP_VERIFY_TOKEN": "v"}), registry(t))
	if own, _ := provider.OwnSenderOf(c.Providers[0].Settings); err != nil || own != "106540352242922" {
		t.Errorf("whatsapp without a number: %v, %v", c.Providers, err)
	}
	_, err = FromEnv(Config{}, env(map[string]string{"MSGSVC_WHATSAPP_TOKEN": "t", "MSGSVC_WHATSAPP_PHONE_NUMBER_ID": "106540352242922",
		"MSGSVC_WHATSAPP_APP_SECRET": "s", "MSGSVC_WHATSAPP_VERIFY_TOKEN": "v", "MSGSVC_WHATSAPP_NUMBER": "+1 555"}), registry(t))
	if err == nil || !strings.Contains(err.Error(), "digits only") {
		t.Errorf("a number that is not digits: %v", err)
	}
}

func TestProblemsNameLineAndKey(t *testing.T) {
	cases := []struct {
		name, yaml string
		want       []string
	}{
		{"unknown key", "providers:\n  - name: a\n    type: smpp\n    smpp:\n      adr: x:1\n", []string{"line 5", "adr"}},
		{"a shared setting that files do not set", "providers:\n  - name: v\n    type: vonage\n    vonage:\n      retryMin: 1s\n", []string{"line 5", "retryMin"}},
		{"a shared setting out of range", "providers:\n  - name: v\n    type: vonage\n    vonage: {apiKey: k, apiSecret: s, signatureSecret: x, from: Acme, timeout: -1s}\n", []string{"providers[0].vonage.timeout"}},
		{"wrong type", "providers:\n  - name: a\n    type: smpp\n    smpp:\n      window: many\n", []string{"line 5"}},
		{"unknown provider in a route", "providers:\n  - name: a\n    type: smpp\n    smpp: {addr: 'h:1', systemId: s}\n" +
			"routes:\n  - channel: sms\n    primary: b\n", []string{"cfg.yaml:6", "routes[0].primary", `no provider is named "b"`}},
		{"provider of another channel", "providers:\n  - name: a\n    type: smpp\n    smpp: {addr: 'h:1', systemId: s}\n" +
			"routes:\n  - channel: RCS\n    primary: a\n", []string{"routes[0].primary", "does not carry RCS"}},
		{"bad calling code", "providers:\n  - name: a\n    type: smpp\n    smpp: {addr: 'h:1', systemId: s}\n" +
			"routes:\n  - channel: SMS\n    countries: ['0044']\n    primary: a\n", []string{"routes[0].countries[0]"}},
		{"missing secret", "providers:\n  - name: a\n    type: smpp\n    smpp: {addr: 'h:1', systemId: s, password: '${NOPE}'}\n",
			[]string{"cfg.yaml:4", "${NOPE} is not set"}},
		{"missing block", "providers:\n  - name: w\n    type: whatsapp\n", []string{"cfg.yaml:2", "providers[0].whatsapp"}},
		{"WhatsApp phone number instead of its id", "providers:\n  - name: w\n    type: whatsapp\n    whatsapp: {token: t, " +
			"phoneNumberId: '+1 555 078 3881', appSecret: s, verifyToken: v, ratePerSecond: -1}\n",
			[]string{"providers[0].whatsapp.phoneNumberId", "providers[0].whatsapp.ratePerSecond"}},
		{"unknown type", "providers:\n  - name: w\n    type: fax\n", []string{"providers[0].type"}},
		{"duplicate name", "providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}}\n" +
			"  - {name: a, type: smpp, smpp: {addr: 'h:2', systemId: s}}\n", []string{"cfg.yaml:3", "used twice"}},
		{"not YAML", "providers: [", []string{"cfg.yaml"}},
		{"more binds than an SMSC account takes", "providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s, binds: 33}}\n",
			[]string{"cfg.yaml:2", "providers[0].smpp.binds", "1 to 32"}},
		{"unknown top-level key", "provider:\n  - {name: a}\n", []string{"line 1", "provider"}},
	}
	for _, c := range cases {
		_, err := Parse("cfg.yaml", []byte(c.yaml), env(nil), registry(t))
		refused(t, c.name, err, c.want)
	}
}

func TestMissingFileIsAnError(t *testing.T) {
	if _, err := Load("does-not-exist.yaml", os.Getenv, registry(t)); err == nil || !strings.Contains(err.Error(), "does-not-exist.yaml") {
		t.Fatalf("got %v", err)
	}
}

func TestEnvironmentShortcut(t *testing.T) {
	c := fromEnv(t, map[string]string{"MSGSVC_SMPP_ADDR": "127.0.0.1:2775", "MSGSVC_SMPP_SYSTEM_ID": "kannel",
		"MSGSVC_SMPP_PASSWORD": "kannel", "MSGSVC_SMPP_BINDS": "2", "MSGSVC_SMPP_TPS": "50"})
	if len(c.Providers) != 1 || smppOf(c.Providers[0]).Binds != 2 || smppOf(c.Providers[0]).Window != 10 ||
		smppOf(c.Providers[0]).TPS != 50 || len(c.Routes) != 1 || c.Routes[0].Channel != domain.SMS {
		t.Fatalf("env config %+v", c)
	}
	if _, err := FromEnv(Config{}, env(map[string]string{"MSGSVC_SMPP_ADDR": "x:1", "MSGSVC_SMPP_SYSTEM_ID": "s",
		"MSGSVC_SMPP_WINDOW": "ten"}), registry(t)); err == nil || !strings.Contains(err.Error(), "MSGSVC_SMPP_WINDOW") {
		t.Fatalf("bad number: %v", err)
	}
	// A file that routes SMS keeps its route; the env provider is added.
	file, err := Parse("f", []byte("providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}}\nroutes:\n  - {channel: SMS, primary: a}\n"), env(nil), registry(t))
	if err != nil {
		t.Fatal(err)
	}
	c, err = FromEnv(file, env(map[string]string{"MSGSVC_SMPP_ADDR": "x:1", "MSGSVC_SMPP_SYSTEM_ID": "s"}), registry(t))
	if err != nil || len(c.Providers) != 2 || len(c.Routes) != 1 || c.Routes[0].Primary != "a" {
		t.Fatalf("merged %+v %v", c, err)
	}
}

// SMS shortcuts of several types make one route: the first registered
// type primary, the next its secondary, the third left to the file.
func TestSeveralSMSShortcutsFailOver(t *testing.T) {
	c := fromEnv(t, map[string]string{"MSGSVC_SMPP_ADDR": "x:1", "MSGSVC_SMPP_SYSTEM_ID": "s",
		"MSGSVC_TWILIO_ACCOUNT_SID": "AC0123456789abcdef0123456789abcdef", "MSGSVC_TWILIO_AUTH_TOKEN": "t",
		"MSGSVC_TWILIO_FROM": "+15017122661", "MSGSVC_PUBLIC_URL": "https://gw.example.com",
		"MSGSVC_VONAGE_API_KEY": "abcd1234", "MSGSVC_VONAGE_API_SECRET": "s", "MSGSVC_VONAGE_SIGNATURE_SECRET": "ss",
		"MSGSVC_VONAGE_FROM": "Acme"})
	if len(c.Providers) != 3 || len(c.Routes) != 1 || c.Routes[0].Primary != "smpp" || c.Routes[0].Secondary != "twilio" {
		t.Fatalf("env config %+v", c)
	}
}

func TestRBMFromEnvironment(t *testing.T) {
	c := fromEnv(t, map[string]string{"MSGSVC_RBM_AGENT_ID": "acme-agent", "MSGSVC_RBM_CREDENTIALS": "/etc/sa.json",
		"MSGSVC_RBM_CLIENT_TOKEN": "tok", "MSGSVC_RBM_RATE_PER_SECOND": "20", "MSGSVC_RBM_FALLBACK_AFTER": "90s"})
	if len(c.Providers) != 1 || c.Providers[0].Name != "rbm" || rbmOf(c.Providers[0]).RatePerSecond != 20 ||
		rbmOf(c.Providers[0]).FallbackAfter != 90*time.Second || len(c.Routes) != 1 || c.Routes[0].Channel != domain.RCS {
		t.Fatalf("env config %+v", c)
	}
	if _, err := FromEnv(Config{}, env(map[string]string{"MSGSVC_RBM_AGENT_ID": "a", "MSGSVC_RBM_CREDENTIALS": "/x",
		"MSGSVC_RBM_CLIENT_TOKEN": "t", "MSGSVC_RBM_FALLBACK_AFTER": "soon"}), registry(t)); err == nil || !strings.Contains(err.Error(), "MSGSVC_RBM_FALLBACK_AFTER") {
		t.Fatalf("bad duration: %v", err)
	}
	if _, err := Parse("f", []byte("providers:\n  - {name: r, type: rbm, rbm: {agentId: a, credentials: /x, clientToken: t, ratePerSecond: -1}}\n"),
		env(nil), registry(t)); err == nil || !strings.Contains(err.Error(), "ratePerSecond") {
		t.Fatalf("negative rate: %v", err)
	}
}
