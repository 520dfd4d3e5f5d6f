package compliance_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/compliance"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/store"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// The functions the command line and the panel call.
func TestOptOutManagement(t *testing.T) {
	storetest.Each(t, func(t *testing.T, st *store.Store, _ string) {
		ctx := context.Background()
		acc := newAccount(t, st, 0)
		o := &compliance.OptOuts{Store: st, Now: (&clock{t: t0}).Now}
		if _, _, err := o.Add(ctx, acc, domain.Live, "12345", domain.OptOutOperator); !errors.Is(err, compliance.ErrPhone) {
			t.Errorf("a bad number: %v", err)
		}
		numbers := []string{"5511999990001", "5511999990002", "5511999990003"}
		for _, n := range numbers {
			rec, added, err := o.Add(ctx, acc, domain.Live, n, domain.OptOutOperator)
			if err != nil || !added || rec.Phone != n || rec.Source != domain.OptOutOperator || rec.Channel != "" {
				t.Fatalf("add %s: %+v %v %v", n, rec, added, err)
			}
		}
		if _, added, _ := o.Add(ctx, acc, domain.Live, numbers[0], domain.OptOutOperator); added {
			t.Error("added twice")
		}
		var seen []string
		cursor := ""
		for pages := 0; pages < 5; pages++ {
			p, err := o.List(ctx, acc, domain.Live, cursor, 2)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range p.OptOuts {
				seen = append(seen, r.Phone)
			}
			if cursor = p.Next; cursor == "" {
				break
			}
		}
		if strings.Join(seen, ",") != strings.Join(numbers, ",") {
			t.Errorf("pages gave %v", seen)
		}
		if p, _ := o.List(ctx, acc, domain.Test, "", 10); len(p.OptOuts) != 0 {
			t.Errorf("the test environment sees the live list: %v", p.OptOuts)
		}
		if _, err := o.List(ctx, acc, domain.Live, "not-a-cursor", 10); !errors.Is(err, compliance.ErrCursor) {
			t.Errorf("bad cursor: %v", err)
		}
		if removed, err := o.Remove(ctx, acc, domain.Live, numbers[1]); err != nil || !removed {
			t.Errorf("remove: %v %v", removed, err)
		}
		if removed, _ := o.Remove(ctx, acc, domain.Live, numbers[1]); removed {
			t.Error("removed twice")
		}
	})
}

func TestCheckSettings(t *testing.T) {
	c, err := compliance.CheckSettings(domain.Compliance{QuietHours: " 21:00 - 08:00 ", RetentionDays: 30,
		OptOutReply: "  You will get no more messages. Reply START to opt in.  "})
	if err != nil || c.QuietHours != "21:00-08:00" || c.OptOutReply != "You will get no more messages. Reply START to opt in." {
		t.Errorf("normalised: %+v %v", c, err)
	}
	_, err = compliance.CheckSettings(domain.Compliance{QuietHours: "9pm-8am", RetentionDays: -1,
		OptInReply: strings.Repeat("é", 1001), OptOutReply: "bell\a"})
	for _, want := range []string{"quiet hours", "retention days", "opt-in reply", "opt-out reply"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
	if _, err := compliance.CheckSettings(domain.Compliance{OptOutReply: strings.Repeat("ж", 700)}); err == nil {
		t.Error("a reply of 11 UCS-2 segments was accepted")
	}
}
