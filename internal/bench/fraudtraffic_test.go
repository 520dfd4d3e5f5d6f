package bench

import (
	"reflect"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
)

// TestTrafficIsTheSeeds: one seed, one traffic, to the send; another seed,
// another traffic; history hours differ from the bench's hour and carry
// no attack.
func TestTrafficIsTheSeeds(t *testing.T) {
	a, b := NewTraffic(7), NewTraffic(7)
	if !reflect.DeepEqual(a.Sends, b.Sends) {
		t.Fatal("one seed drew two traffics")
	}
	if c := NewTraffic(8); reflect.DeepEqual(a.Sends, c.Sends) {
		t.Fatal("two seeds drew one traffic")
	}
	h1, h2 := a.History(1), a.History(2)
	if reflect.DeepEqual(h1, h2) || reflect.DeepEqual(h1, a.Sends) {
		t.Fatal("history hours repeat each other")
	}
	for _, m := range append(h1, h2...) {
		if m.Label == LabelAttack {
			t.Fatal("the history holds the attack")
		}
	}
	for i := 1; i < len(a.Sends); i++ {
		if a.Sends[i].At < a.Sends[i-1].At {
			t.Fatalf("send %d is earlier than the one before it", i)
		}
	}
}

// TestTrafficLooksLikeTheAfternoonItModels checks the figures the model
// promises (docs/benchmarks.md, "Fraud guard"): volumes, home shares,
// repeat recipients, the rare country, and the attack's ramp and ranges.
func TestTrafficLooksLikeTheAfternoonItModels(t *testing.T) {
	needHour(t)
	tr := NewTraffic(1)
	s := tr.Summary()
	t.Logf("%+v", s)
	for i, a := range tr.Accounts {
		want := a.PerHour + float64(a.CampaignSize) + a.StaffPerHour*float64(len(a.Staff))
		if got := float64(s.ByAccount[i]); got < want*0.85 || got > want*1.15 {
			t.Errorf("%s: %v sends in the hour, want about %v", a.Name, got, want)
		}
	}
	if s.HomeShare < 0.93 || s.HomeShare > 0.99 {
		t.Errorf("home share %.3f", s.HomeShare)
	}
	if s.RepeatShare < 0.2 || s.RepeatShare > 0.45 {
		t.Errorf("repeat share %.3f", s.RepeatShare)
	}
	if s.MaxPerRecipient < 3 || s.MaxPerRecipient > 10 {
		t.Errorf("most sends to one customer: %d", s.MaxPerRecipient)
	}
	// The attack's country is one the account rarely sends to: a message
	// or two an hour, none in some hours.
	there := 0
	for ago := 1; ago <= 24; ago++ {
		for _, m := range tr.History(ago) {
			if m.Account == tr.Attack.Account && countryOf(m.To) == tr.Attack.Country {
				there++
			}
		}
	}
	if there == 0 || there > 3*24 || s.AttackCountryShare > 0.5 {
		t.Errorf("the attacked account sent %d messages to the attack's country in 24 hours, %.2f %% in the bench's hour",
			there, s.AttackCountryShare)
	}
	if s.Attack < 1500 || s.Attack > 3000 {
		t.Errorf("%d attack sends", s.Attack)
	}
	// The ramp: few in its first ten minutes, many in its last ten.
	var early, late int
	inRange := map[string]int{}
	for _, m := range tr.Sends {
		if err := checkNumber(m.To); err != nil {
			t.Fatalf("%s: %v", m.To, err)
		}
		if m.Label != LabelAttack {
			continue
		}
		if m.Account != tr.Attack.Account || m.Kind != KindPump {
			t.Fatalf("attack send %+v", m)
		}
		inRange[domain.RangeOf(m.To)]++
		switch {
		case m.At < tr.Attack.Start:
			t.Fatalf("attack before its start: %+v", m)
		case m.At < tr.Attack.Start+10*time.Minute:
			early++
		case m.At >= 50*time.Minute:
			late++
		}
	}
	if early*5 > late || early == 0 {
		t.Errorf("the attack does not ramp: %d sends in its first ten minutes, %d in the last ten", early, late)
	}
	if len(inRange) != 3 {
		t.Errorf("attack ranges %v", inRange)
	}
	for _, r := range tr.Attack.Ranges {
		if inRange[r] < s.Attack/5 {
			t.Errorf("range %s: %d of %d attack sends", r, inRange[r], s.Attack)
		}
	}
}

func checkNumber(s string) error {
	if end := s[len(s)-4:]; end >= "0001" && end <= "0005" {
		return errSimulatorEnding
	}
	_, err := phone.Parse(s)
	return err
}

var errSimulatorEnding = errorString("ends like the simulator's failing numbers")

type errorString string

func (e errorString) Error() string { return string(e) }
