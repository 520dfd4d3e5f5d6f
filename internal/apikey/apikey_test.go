package apikey

import (
	"regexp"
	"testing"
)

func TestGenerateFormat(t *testing.T) {
	re := regexp.MustCompile(`^svc_(live|test)_[A-Za-z0-9]{40}$`)
	seen := map[string]bool{}
	for _, env := range []string{Live, Test} {
		for i := 0; i < 200; i++ {
			k, err := Generate(env)
			if err != nil {
				t.Fatal(err)
			}
			if !re.MatchString(k.Secret) || seen[k.Secret] {
				t.Fatalf("bad or repeated key %q", k.Secret)
			}
			seen[k.Secret] = true
			if got, err := Parse(k.Secret); err != nil || got != env {
				t.Fatalf("Parse(%q) = %q, %v", k.Secret, got, err)
			}
			if k.Hash != Hash(k.Secret) || len(k.Prefix) != len("svc_"+env+"_")+4 {
				t.Fatalf("bad hash or prefix for %q", k.Secret)
			}
		}
	}
	if _, err := Generate("prod"); err == nil {
		t.Fatal("unknown environment accepted")
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "svc_live_", "svc_live_abc", "svc_prod_" + "a123456789012345678901234567890123456789",
		"svc_live_a12345678901234567890123456789012345678-", "svc_live_a1234567890123456789012345678901234567890"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
}
