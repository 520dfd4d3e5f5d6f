package routing

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const twoCarriers = "providers:\n  - {name: a, type: smpp, smpp: {addr: 'h:1', systemId: s}, costs: {'44': 0.031, '447': 0.034}}\n" +
	"  - {name: b, type: smpp, smpp: {addr: 'h:2', systemId: s}, costs: rates.csv}\n"

func TestCostsAndStrategies(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rates.csv"), []byte("prefix,cost\n44,0.02\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "msgsvc.yaml")
	yaml := twoCarriers + "currency: EUR\nroutes:\n" +
		"  - {name: uk, channel: SMS, prefixes: ['447'], providers: [a, b], strategy: least-cost}\n" +
		"  - {channel: SMS, accounts: [acc_1], senders: [Acme], hours: '08:00-20:00', providers: [a, b], strategy: weighted, weights: {a: 70, b: 30}}\n" +
		"  - {channel: SMS, providers: [b, a], strategy: quality, window: 200, allowLoss: true}\n" +
		"  - {channel: SMS, primary: a, secondary: b}\n"
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(file, env(nil), registry(t))
	if err != nil {
		t.Fatal(err)
	}
	if c.Currency != "EUR" || c.Providers[0].Costs.Len() != 2 || c.Providers[1].Costs.Len() != 1 {
		t.Fatalf("costs %+v", c)
	}
	if got, _, _ := c.Providers[1].Costs.Lookup("447700"); got != 20_000 {
		t.Fatalf("csv cost %d", got)
	}
	if ch := c.Routes[3].Chain(); len(ch) != 2 || ch[0] != "a" || ch[1] != "b" {
		t.Fatalf("short form chain %v", ch)
	}
	if r := c.Routes[1]; r.Weights["a"] != 70 || r.Hours != "08:00-20:00" || !c.Routes[2].AllowLoss || c.Routes[2].Window != 200 {
		t.Fatalf("routes %+v", c.Routes)
	}
}

func TestRouteProblems(t *testing.T) {
	cases := []struct {
		name, routes string
		want         []string
	}{
		{"unknown strategy", "{channel: SMS, providers: [a], strategy: cheapest}", []string{"routes[0].strategy"}},
		{"weights without weighted", "{channel: SMS, providers: [a, b], weights: {a: 1}}", []string{"routes[0].weights", "only for the weighted"}},
		{"weighted without weights", "{channel: SMS, providers: [a, b], strategy: weighted}", []string{"routes[0].weights", "required"}},
		{"weight of a stranger", "{channel: SMS, providers: [a], strategy: weighted, weights: {c: 1}}", []string{"routes[0].weights.c"}},
		{"both forms", "{channel: SMS, providers: [a], primary: b}", []string{"routes[0].providers", "not both"}},
		{"no providers", "{channel: SMS}", []string{"routes[0].providers", "required"}},
		{"unknown provider", "{channel: SMS, providers: [a, c]}", []string{"routes[0].providers[1]", `no provider is named "c"`}},
		{"twice", "{channel: SMS, providers: [a, a]}", []string{"routes[0].providers[1]", "twice"}},
		{"bad hours", "{channel: SMS, providers: [a], hours: 'all day'}", []string{"routes[0].hours"}},
		{"bad prefix", "{channel: SMS, providers: [a], prefixes: ['+44']}", []string{"routes[0].prefixes[0]"}},
		{"countries and prefixes", "{channel: SMS, providers: [a], prefixes: ['447'], countries: ['44']}", []string{"not both"}},
		{"window without quality", "{channel: SMS, providers: [a], window: 10}", []string{"routes[0].window"}},
		{"unknown key", "{channel: SMS, providers: [a], allowloss: true}", []string{"allowloss"}},
	}
	for _, c := range cases {
		_, err := Parse("cfg.yaml", []byte(strings.Replace(twoCarriers, "rates.csv", "{'1': 0.01}", 1)+"routes:\n  - "+c.routes+"\n"), env(nil), registry(t))
		refused(t, c.name, err, c.want)
	}
	for _, bad := range []struct{ costs, want string }{
		{"missing.csv", "providers[1].costs"},
		{"{'4a': 0.1}", "4a"},
		{"{'44': -1}", "negative"},
		{"[1, 2]", "costs must be"},
	} {
		_, err := Parse("cfg.yaml", []byte(strings.Replace(twoCarriers, "rates.csv", bad.costs, 1)), env(nil), registry(t))
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("costs %s: %v", bad.costs, err)
		}
	}
	if _, err := Parse("cfg.yaml", []byte("currency: euro\n"), env(nil), registry(t)); err == nil || !strings.Contains(err.Error(), "currency") {
		t.Errorf("bad currency: %v", err)
	}
}
