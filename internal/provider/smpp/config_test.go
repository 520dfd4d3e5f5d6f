package smpp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/pdu"
)

func TestValidate(t *testing.T) {
	ok := Config{Addr: "smsc.example:2775", SystemID: "user", Password: "12345678"}
	if err := ok.Validate(); err != nil {
		t.Fatal(err)
	}
	bad := Config{
		Addr: "nohost", SystemID: strings.Repeat("s", 16), Password: "123456789", SystemType: strings.Repeat("t", 13),
		Binds: -1, Window: 5000, TPS: -1, GSMPacking: "zipped", SourceAddr: "ThisIsTooLong",
		RequestTimeout: -time.Second,
	}
	err := bad.Validate()
	if err == nil {
		t.Fatal("bad config accepted")
	}
	for _, field := range []string{"Addr", "SystemID", "Password", "SystemType", "Binds", "Window", "TPS",
		"GSMPacking", "SourceAddr", "RequestTimeout"} {
		if !strings.Contains(err.Error(), "smpp config: "+field+" ") {
			t.Errorf("no complaint about %s in:\n%v", field, err)
		}
	}
	for _, c := range []Config{{SystemID: "u"}, {Addr: "h:0", SystemID: "u"}, {Addr: "h:2775"}} {
		if c.Validate() == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	if _, err := New(bad, newSink()); err == nil {
		t.Fatal("New took a bad config")
	}
	if _, err := New(ok, nil); err == nil {
		t.Fatal("New took a nil Sink")
	}
}

func TestDefaults(t *testing.T) {
	c := Config{Addr: "h:1", SystemID: "u"}.withDefaults()
	if c.Name != "smpp" || c.Binds != 1 || c.Window != 10 || c.GSMPacking != pdu.Unpacked || c.TPS != 0 ||
		c.EnquireLinkInterval != 30*time.Second || c.RequestTimeout != 10*time.Second {
		t.Fatalf("defaults = %+v", c)
	}
}

func TestSMPPTimes(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 800_000_000, time.FixedZone("BRT", -3*3600))
	if got := absoluteTime(at); got != "260304080607800+" {
		t.Fatalf("absolute = %q", got)
	}
	for d, want := range map[time.Duration]string{
		72 * time.Hour:                        "000003000000000R",
		90*time.Minute + 500*time.Millisecond: "000000013001000R",
		400 * 24 * time.Hour:                  "000030000000000R",
	} {
		if got := relativeTime(d); got != want {
			t.Errorf("relative(%v) = %q; want %q", d, got, want)
		}
	}
}

func TestRelativeValidity(t *testing.T) {
	f := newFakeSMSC(t)
	clk := newFakeClock()
	cfg := testConfig(f.addr())
	cfg.RelativeValidity = true
	c := startClient(t, cfg, newSink(), WithClock(clk))
	m := outSMS("m", "5511999990000", "x")
	m.ExpiresAt = clk.Now().Add(2 * time.Hour)
	mustOK(t, submit(t, c, m))
	if v := f.submitList()[0].sm.ValidityPeriod; v != "000000020000000R" {
		t.Fatalf("validity_period %q", v)
	}
}

func TestAddresses(t *testing.T) {
	for from, want := range map[string][3]any{
		"":             {byte(0), byte(0), ""},
		"MyShop":       {byte(5), byte(0), "MyShop"},
		"Shop 24":      {byte(5), byte(0), "Shop 24"},
		"+15550001111": {byte(1), byte(1), "15550001111"},
		"12345":        {byte(1), byte(1), "12345"},
	} {
		ton, npi, addr, err := sourceAddress(from)
		if err != nil || ton != want[0] || npi != want[1] || addr != want[2] {
			t.Errorf("sourceAddress(%q) = %d %d %q %v", from, ton, npi, addr, err)
		}
	}
	for _, bad := range []string{"TwelveLetter", "Caf\u00e9", strings.Repeat("1", 21), "+"} {
		if _, _, _, err := sourceAddress(bad); err == nil {
			t.Errorf("sourceAddress(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"", "+", "55 11", strings.Repeat("1", 21), "abc"} {
		if _, err := destAddress(bad); err == nil {
			t.Errorf("destAddress(%q) accepted", bad)
		}
	}
}

func TestBucket(t *testing.T) {
	if newBucket(0, realClock{}) != nil {
		t.Fatal("TPS 0 should not limit")
	}
	clk := newFakeClock()
	b := newBucket(10, clk) // 100 ms apart
	ctx := context.Background()
	if err := b.take(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The second token is 100 ms away; a cancelled wait hands it back.
	cctx, cancel := context.WithCancel(ctx)
	errc := make(chan error, 1)
	go func() { errc <- b.take(cctx, nil) }()
	eventually(t, "a waiter", func() bool { return clk.waiting(100*time.Millisecond) == 1 })
	cancel()
	if err := <-errc; err == nil {
		t.Fatal("cancelled take succeeded")
	}
	go func() { errc <- b.take(ctx, nil) }()
	eventually(t, "the next waiter", func() bool { return clk.waiting(100*time.Millisecond) == 2 })
	clk.Advance(100 * time.Millisecond)
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	// After a quiet spell there is no debt: the next token is immediate.
	clk.Advance(time.Hour)
	if err := b.take(ctx, nil); err != nil || clk.waiting(time.Hour) != 0 {
		t.Fatalf("take after idle: %v", err)
	}
}

func TestBackoff(t *testing.T) {
	c := &Client{rand: func() float64 { return 0 }}
	lo, hi := 100*time.Millisecond, time.Second
	for n, want := range map[int]time.Duration{1: 50 * time.Millisecond, 2: 100 * time.Millisecond,
		3: 200 * time.Millisecond, 4: 400 * time.Millisecond, 5: 500 * time.Millisecond, 50: 500 * time.Millisecond} {
		if got := c.backoff(n, lo, hi); got != want {
			t.Errorf("backoff(%d) = %v; want %v", n, got, want)
		}
	}
	c.rand = func() float64 { return 0.999999 }
	if got := c.backoff(50, lo, hi); got < 999*time.Millisecond || got > hi {
		t.Errorf("backoff with full jitter = %v", got)
	}
}

func TestCollector(t *testing.T) {
	f := newFakeSMSC(t)
	c := startClient(t, testConfig(f.addr()), newSink())
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c.Collector()); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range families {
		for _, m := range mf.GetMetric() {
			if l := m.GetLabel(); len(l) != 1 || l[0].GetName() != "provider" || l[0].GetValue() != "smpp-test" {
				t.Fatalf("%s labels %v", mf.GetName(), l)
			}
			got[mf.GetName()] = m.GetGauge().GetValue() + m.GetCounter().GetValue()
		}
	}
	if len(got) != 7 || got["smpp_binds_up"] != 1 || got["smpp_binds_configured"] != 1 || got["smpp_throttled_total"] != 0 {
		t.Fatalf("metrics = %v", got)
	}
}
