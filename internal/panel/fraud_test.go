package panel

import (
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

func TestFraudChart(t *testing.T) {
	since := time.Date(2026, 11, 28, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return since.Add(time.Duration(h) * time.Hour) }
	rows := []domain.FraudHour{
		{Hour: at(2), AccountID: "acc_a", Rule: domain.RuleBurst, Scope: domain.ScopeCountry, Key: "998", Action: domain.FraudBlock, Messages: 30},
		{Hour: at(2), AccountID: "acc_a", Rule: domain.RulePerRange, Scope: domain.ScopeRange, Key: "998934512", Action: domain.FraudBlock, Messages: 5},
		{Hour: at(3), AccountID: "acc_b", Rule: domain.RulePerRecipient, Scope: domain.ScopeRecipient, Key: "5511999990", Action: domain.FraudHold, Messages: 2},
		{Hour: at(30), AccountID: "acc_b", Rule: domain.RuleBurst, Scope: domain.ScopeCountry, Key: "1", Messages: 99}, // outside
	}
	names := map[string]string{"acc_a": "Tandem"}
	c := fraudChart(rows, since, 24, "rule", names)
	if !strings.HasPrefix(c.Summary, "37 messages") || len(c.Bars) != 3 || len(c.Legend) != 3 {
		t.Fatalf("by rule: %q, %d bars, legend %+v", c.Summary, len(c.Bars), c.Legend)
	}
	if c.Legend[0].Name != "Per recipient" || c.Legend[0].Total != "2" || c.Legend[2].Name != "Burst" || c.Legend[2].Total != "30" {
		t.Fatalf("legend %+v", c.Legend)
	}
	// Hour 2's two rules stack from the axis, per range (s1) under burst (s2).
	rng, burst := c.Bars[0], c.Bars[1]
	if rng.Class != "s1" || burst.Class != "s2" || rng.Y+rng.H != padTop+plotH || burst.Y+burst.H != rng.Y {
		t.Fatalf("bars do not stack: %+v %+v", rng, burst)
	}
	if top := c.Grid[len(c.Grid)-1]; top.Label != "40" {
		t.Fatalf("scale %+v", top)
	}
	if !strings.Contains(burst.Title, "30 Burst") || !strings.Contains(burst.Title, "02:00") {
		t.Fatalf("bar title %q", burst.Title)
	}
	byAccount := fraudChart(rows, since, 24, "account", names)
	if byAccount.Legend[0].Name != "Tandem" || byAccount.Legend[0].Total != "35" || byAccount.Legend[1].Name != "acc_b" {
		t.Fatalf("by account: %+v", byAccount.Legend)
	}
	byKey := fraudChart(rows, since, 24, "key", names)
	if byKey.Legend[0].Name != "+998 (country)" || byKey.Legend[1].Name != "+998934512xxx" || byKey.Legend[2].Name != "+5511999990xxx" {
		t.Fatalf("by key: %+v", byKey.Legend)
	}
	// Beyond five series the rest are summed as "other".
	var many []domain.FraudHour
	for i := range 8 {
		many = append(many, domain.FraudHour{Hour: at(1), AccountID: "acc_" + string(rune('a'+i)), Rule: domain.RuleBurst, Messages: int64(10 - i)})
	}
	other := fraudChart(many, since, 24, "account", nil)
	if len(other.Legend) != 6 || other.Legend[5].Name != "Other" || other.Legend[5].Total != "12" || !strings.HasPrefix(other.Summary, "52 messages") {
		t.Fatalf("other: %+v", other.Legend)
	}
	if empty := fraudChart(nil, since, 168, "rule", nil); !empty.Empty || len(empty.Bars) != 0 || len(empty.Labels) != 6 {
		t.Fatalf("an empty week: %+v", empty)
	}
}

func TestDecisionText(t *testing.T) {
	for _, c := range []struct {
		d    domain.FraudDecision
		want string
	}{
		{domain.FraudDecision{Rule: domain.RuleBurst, Scope: domain.ScopeCountry, Key: "998", Count: 26, Cap: 25, Baseline: 5, Factor: 5},
			"Burst: message 26 to +998 (country) this hour, over 5 × the trailing baseline of 5.0 an hour (25)"},
		{domain.FraudDecision{Rule: domain.RulePerRange, Scope: domain.ScopeRange, Key: "998934512", Count: 51, Cap: 50},
			"Per range: message 51 to +998934512xxx this hour, over the cap of 50"},
		{domain.FraudDecision{Rule: domain.RulePerRecipient, Scope: domain.ScopeRecipient, Key: "5511999990000", Count: 11, Cap: 10},
			"Per recipient: message 11 to +5511999990000 this hour, over the cap of 10"},
	} {
		if got := decisionText(&c.d); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	fraudTops := fraudTops([]domain.FraudHour{
		{Hour: time.Unix(7200, 0), AccountID: "a", Rule: domain.RuleBurst, Scope: domain.ScopeCountry, Key: "998", Action: domain.FraudBlock, Messages: 3},
		{Hour: time.Unix(3600, 0), AccountID: "a", Rule: domain.RuleBurst, Scope: domain.ScopeCountry, Key: "998", Action: domain.FraudBlock, Messages: 4},
		{Hour: time.Unix(3600, 0), AccountID: "b", Rule: domain.RulePerRange, Scope: domain.ScopeRange, Key: "1212555", Action: domain.FraudHold, Messages: 5},
	}, map[string]string{"a": "A"})
	if len(fraudTops) != 2 || fraudTops[0].Messages != 7 || fraudTops[0].AccountName != "A" || !fraudTops[0].First.Equal(time.Unix(3600, 0)) ||
		!fraudTops[0].Last.Equal(time.Unix(7200, 0)) || fraudTops[1].Key != "+1212555xxx" {
		t.Fatalf("tops %+v", fraudTops)
	}
}
