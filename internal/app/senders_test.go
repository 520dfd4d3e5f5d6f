package app

import (
	"context"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

func TestSenders(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		for _, s := range []domain.Sender{
			{Channel: domain.SMS, Value: "Acme", Default: true},
			{Channel: domain.SMS, Value: "15550001111"},
			{Channel: domain.WhatsApp, Value: "15550002222", Default: true},
		} {
			s.ID, s.AccountID, s.CreatedAt = id.New(id.Sender, time.Now()), e.account.ID, time.Now()
			if err := e.st.AddSender(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		cases := []struct {
			name, typ, from string
			status          int
			want            any // the from echoed in the status query
		}{
			{"approved ID", "SMS", "15550001111", 202, "15550001111"},
			{"default when none given", "SMS", "", 202, "Acme"},
			{"not approved", "SMS", "Other", 400, nil},
			{"bad form: too long", "SMS", "ABCDEFGHIJKL", 400, nil},
			{"bad form: no letter", "SMS", "12 34", 400, nil},
			{"another channel's sender", "RCS", "Acme", 400, nil},
		}
		for _, c := range cases {
			body := map[string]any{"to": "5511999990010", "message": "hi", "type": c.typ}
			if c.from != "" {
				body["from"] = c.from
			}
			r := send(t, e, e.testKey, body)
			if r.status != c.status {
				t.Fatalf("%s: %d %s", c.name, r.status, r.body)
			}
			if c.status != 202 {
				if f := fieldsOf(t, r); len(f) != 1 || f[0] != "from" {
					t.Fatalf("%s: errors name %v, want from", c.name, f)
				}
				continue
			}
			mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
			m := e.do("GET", "/api/v1/integration/messages/"+mid, e.testKey, nil).json(t)
			if m["from"] != c.want {
				t.Fatalf("%s: from %v, want %v", c.name, m["from"], c.want)
			}
		}
		// Removing the default leaves sends to the route's own sender.
		list, err := e.st.Senders(ctx, e.account.ID)
		if err != nil || len(list) != 3 {
			t.Fatalf("senders %v %v", list, err)
		}
		for _, s := range list {
			if s.Value == "Acme" {
				if err := e.st.RemoveSender(ctx, e.account.ID, s.ID); err != nil {
					t.Fatal(err)
				}
			}
		}
		r := send(t, e, e.testKey, map[string]any{"to": "5511999990010", "message": "hi", "type": "SMS"})
		mid := r.json(t)["messages"].([]any)[0].(map[string]any)["messageId"].(string)
		if m := e.do("GET", "/api/v1/integration/messages/"+mid, e.testKey, nil).json(t); m["from"] != nil {
			t.Fatalf("from after removing the default: %v", m["from"])
		}
	})
}
