package store

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
	"github.com/msgsvc/msgsvc/internal/ledger"
)

// TestMultiRowWritesNeedNoStatementJournal holds the writer's multi-row
// statements on SQLite to FAIL on a constraint rather than ABORT: an ABORT
// statement in a transaction copies each page it first changes into a
// statement journal, so that it can undo its own rows, which a write group
// never needs (a failed write takes its transaction or its savepoint down
// with it; TestGroupedWritesFailAlone holds that). It runs the hot path's
// writes two rows at a time and reads the program SQLite compiled for each
// multi-row statement the writer prepared: a constraint's halt names its
// resolution in P2, and 2 is ABORT.
func TestMultiRowWritesNeedNoStatementJournal(t *testing.T) {
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	s, err := Open(ctx, filepath.Join(t.TempDir(), "msgsvc.db"), Options{Now: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	acc := domain.Account{ID: id.New(id.Account, at), Name: "A", Tier: "free", Currency: "USD", CountryCode: "46",
		WebhookSecret: "s", CreatedAt: at}
	if err := s.CreateAccount(ctx, acc); err != nil {
		t.Fatal(err)
	}
	const owner = "node-1"
	var msgs []domain.Message
	var evs []domain.Event
	var lines []ledger.Entry
	var usage []domain.UsageDelta
	for i := range 2 {
		when := at.Add(time.Duration(i) * time.Millisecond)
		m := domain.Message{ID: id.New(id.Message, when), AccountID: acc.ID, Env: domain.Live, To: "4670000000" + string(rune('0'+i)),
			CountryCode: "46", Type: domain.SMS, Channel: domain.SMS, Body: "hi", Status: domain.Sending, Segments: 1,
			Encoding: "GSM-7", Credits: 5, Charged: 5, CreatedAt: when, UpdatedAt: when, ExpiresAt: when.Add(time.Hour),
			LeaseOwner: owner, Attempts: 1, NextAttemptAt: when.Add(time.Minute)}
		m.CampaignID = id.Derive(id.Campaign, m.ID)
		msgs = append(msgs, m)
		evs = append(evs, domain.Event{ID: id.New(id.Event, when), AccountID: acc.ID, Env: domain.Live, CampaignID: m.CampaignID,
			MessageID: m.ID, Event: "delivery_status", URL: "https://hooks.example.com/cb", Body: "{}", State: domain.EventPending,
			LeaseOwner: owner, NextAttemptAt: when.Add(time.Minute), CreatedAt: when, NoEarlier: true})
		lines = append(lines, ledger.Entry{ID: id.New(id.Ledger, when), AccountID: acc.ID, Amount: 5, BalanceAfter: int64(5 * (i + 1)),
			Kind: ledger.TopUp, CreatedAt: when})
		usage = append(usage, domain.UsageDelta{UsageKey: domain.UsageKey{AccountID: acc.ID, Env: domain.Live,
			Day: domain.DayNumber(when), Channel: domain.SMS, Country: []string{"46", "34"}[i]}, UsageCount: domain.UsageCount{Messages: 1}})
	}
	err = s.Write(ctx, func(tx *Tx) error {
		if err := tx.InsertLedger(ctx, lines); err != nil {
			return err
		}
		if err := tx.AddUsage(ctx, usage); err != nil {
			return err
		}
		if err := tx.InsertMessages(ctx, msgs); err != nil {
			return err
		}
		if err := tx.InsertEvents(ctx, evs); err != nil {
			return err
		}
		sent := make([]domain.Message, len(msgs))
		for i, m := range msgs {
			m.Status, m.Provider, m.ProviderRef = domain.Sent, "smpp", "ref-"+m.ID
			m.SentAt, m.UpdatedAt = at.Add(time.Second), at.Add(time.Second)
			m.LeaseOwner, m.NextAttemptAt = "", time.Time{}
			sent[i] = m
		}
		return tx.UpdateChangedMessages(ctx, msgs, sent)
	})
	if err != nil {
		t.Fatal(err)
	}
	outs := make([]domain.AttemptOutcome, len(evs))
	for i, ev := range evs {
		outs[i] = domain.AttemptOutcome{State: domain.EventDelivered, AccountID: acc.ID, URL: ev.URL,
			Attempt: domain.Attempt{ID: id.New(id.Attempt, at), EventID: ev.ID, AttemptedAt: at, StatusCode: 200, Duration: time.Millisecond}}
	}
	if err := s.RecordAttempts(ctx, owner, outs); err != nil {
		t.Fatal(err)
	}

	checked := map[string]bool{}
	for _, ws := range s.wr.stmts {
		verb, _, _ := strings.Cut(ws.sql, " ")
		if (verb != "INSERT" && verb != "UPDATE") || !strings.Contains(ws.sql, "), (") {
			continue // one row: SQLite opens no statement journal for it
		}
		words := strings.Fields(ws.sql)
		table := words[slices.IndexFunc(words, func(w string) bool { return w != verb && w != "OR" && w != "FAIL" && w != "INTO" })]
		if strings.Contains(ws.sql, "DO UPDATE") {
			// An upsert's update always aborts, whatever the insert
			// asks for. The usage rows' upsert is one row a group
			// unless the group spans several accounts or countries.
			checked["upsert "+table] = true
			continue
		}
		// Explained, not run: the arguments only need to be there.
		rows, err := s.r.QueryContext(ctx, "EXPLAIN "+ws.sql, make([]any, strings.Count(ws.sql, "?"))...)
		if err != nil {
			t.Fatalf("explain %s: %v", ws.sql, err)
		}
		aborts := int64(-1)
		for rows.Next() {
			var addr, p1, p2, p3 int64
			var op string
			var p4, p5, comment any
			if err := rows.Scan(&addr, &op, &p1, &p2, &p3, &p4, &p5, &comment); err != nil {
				t.Fatal(err)
			}
			if (op == "Halt" || op == "HaltIfNull") && p2 == 2 && aborts < 0 {
				aborts = addr
			}
		}
		if aborts >= 0 {
			t.Errorf("%s\nmay abort (opcode %d halts with P2=2): it copies every page it changes into a statement journal", ws.sql, aborts)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		checked[verb+" "+table] = true
	}
	for _, want := range []string{"INSERT ledger", "upsert usage_days", "INSERT messages", "INSERT webhook_events",
		"UPDATE messages"} {
		if !checked[want] {
			t.Errorf("no multi-row %q among the writer's statements (checked: %v)", want, checked)
		}
	}
}
