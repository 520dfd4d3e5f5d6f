package bench

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestGuardAloneStopsTheAttackNotTheCustomers runs the hour through the
// guard in process with the bench's rules: it stops the attack from its
// 26th message on (the attacked country's burst, its floor of 5 an hour
// times 5) and no ordinary message.
func TestGuardAloneStopsTheAttackNotTheCustomers(t *testing.T) {
	needHour(t)
	tr := NewTraffic(1)
	g, err := guardAlone(context.Background(), tr, historyCounts(tr, 24), DefaultFraudRules(), 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guard alone: %.1f µs/msg over %d messages", g.CPUMicrosPerMsg, g.Messages)
	s := tr.Summary()
	if g.Messages != len(tr.Sends) || g.NormalStopped != 0 || g.AttackStopped != s.Attack-25 || g.CPUMicrosPerMsg <= 0 {
		t.Fatalf("%+v, attack %d", g, s.Attack)
	}
}

// TestGuardAloneDecidesTheSameAfterARestartMidHour restarts the store
// and the guard halfway through the hour (the attack under way): the
// counts are taken again from the messages written so far, so the guard
// stops exactly what it stops without the restart.
func TestGuardAloneDecidesTheSameAfterARestartMidHour(t *testing.T) {
	needHour(t)
	tr := NewTraffic(1)
	g, err := guardAloneRestarting(context.Background(), tr, historyCounts(tr, 24), DefaultFraudRules(), 20*time.Second, len(tr.Sends)/2)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("guard alone, restarted at message %d: %.1f µs/msg over %d messages", len(tr.Sends)/2, g.CPUMicrosPerMsg, g.Messages)
	s := tr.Summary()
	if g.Messages != len(tr.Sends) || g.NormalStopped != 0 || g.AttackStopped != s.Attack-25 {
		t.Fatalf("%+v, attack %d", g, s.Attack)
	}
}

// TestRoundsAlternateTheModesOrder: each mode runs first in one round
// and last in the next, so that a run's place in a round falls on every
// mode alike.
func TestRoundsAlternateTheModesOrder(t *testing.T) {
	modes := []string{ModeOff, ModeAlert, ModeBlock}
	got := [][]string{roundOrder(modes, 1), roundOrder(modes, 2), roundOrder(modes, 3)}
	want := [][]string{{ModeOff, ModeAlert, ModeBlock}, {ModeBlock, ModeAlert, ModeOff}, {ModeOff, ModeAlert, ModeBlock}}
	for i := range want {
		if strings.Join(got[i], ",") != strings.Join(want[i], ",") {
			t.Fatalf("round %d: %v, want %v", i+1, got[i], want[i])
		}
	}
	if strings.Join(modes, ",") != "off,alert,block" {
		t.Fatalf("the modes given were reordered: %v", modes)
	}
}
