package simulator

import (
	"context"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider"
)

func TestCapabilities(t *testing.T) {
	s := New(Config{})
	got := s.Capabilities(context.Background(), []string{"5511999990003", "5511999990012", "14155550003"})
	want := map[string]bool{"5511999990003": false, "5511999990012": true, "14155550003": false}
	for n, v := range want {
		if got[n] != v {
			t.Errorf("%s: %v, want %v", n, got[n], v)
		}
	}
	s.Capabilities(context.Background(), []string{"5511999990099"})
	if calls, numbers := s.CapabilityChecks(); calls != 2 || numbers != 4 {
		t.Fatalf("counted %d calls about %d numbers", calls, numbers)
	}
	// Submitting RCS to a phone without RCS is still refused, for callers
	// that do not ask first.
	res := s.Submit(context.Background(), []provider.Outbound{{ID: "m1", To: "5511999990003", Channel: "RCS"}, {ID: "m2", To: "5511999990003", Channel: "SMS"}})
	if res[0].Err == nil || res[0].Err.Code != "RCS_NOT_SUPPORTED" || res[1].Err != nil {
		t.Fatalf("submit: %+v", res)
	}
}
