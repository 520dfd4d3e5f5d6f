package intake

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// spyRows hands out generated rows a chunk at a time, counting the largest
// chunk and the rows ever held at once: a campaign's rows must never be
// all in memory.
type spyRows struct {
	n        int
	bad      map[int]bool // row index → an invalid number
	largest  int
	passes   int
	rowsRead int
}

func (s *spyRows) Each(_ context.Context, n int, fn func([]FileRow) error) error {
	s.passes++
	buf := make([]FileRow, 0, n)
	for i := 0; i < s.n; i++ {
		to := fmt.Sprintf("5511%09d", 900000000+i)
		if s.bad[i] {
			to = "12"
		}
		buf = append(buf, FileRow{Line: i + 2, To: to, Text: fmt.Sprintf("Hi %d", i)})
		s.rowsRead++
		if len(buf) == n {
			s.largest = max(s.largest, len(buf))
			if err := fn(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	if len(buf) > 0 {
		s.largest = max(s.largest, len(buf))
		return fn(buf)
	}
	return nil
}

// chunkTx counts the messages each insert writes.
type chunkTx struct {
	*fakeTx
	largestInsert *int
}

func (c chunkTx) InsertMessages(ctx context.Context, msgs []domain.Message) error {
	*c.largestInsert = max(*c.largestInsert, len(msgs))
	return c.fakeTx.InsertMessages(ctx, msgs)
}

type chunkWriter struct {
	w       *fakeWriter
	largest int
}

func (c *chunkWriter) Write(ctx context.Context, fn func(tx SendTx) error) error {
	return c.w.Write(ctx, func(tx SendTx) error { return fn(chunkTx{fakeTx: tx.(*fakeTx), largestInsert: &c.largest}) })
}

func fileService(t *testing.T, balance int64) (*Service, *chunkWriter, domain.Account) {
	acc := domain.Account{ID: "acc_file", Name: "File", Currency: "USD", CountryCode: "55", Balance: balance}
	tx := newFakeTx()
	tx.balances[acc.ID] = balance
	w := &chunkWriter{w: &fakeWriter{tx: tx}}
	now := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	svc := NewService(Config{Store: fakeStore{acc}, Writer: w, Now: func() time.Time { return now }})
	t.Cleanup(svc.Close)
	return svc, w, acc
}

// A campaign from a file is read and written a chunk at a time, and
// charged exactly its messages' prices: the balance moves by the sum of
// the messages' credits, which is the recipients times the price.
func TestSendFileChunkedAndChargedExactly(t *testing.T) {
	ctx := context.Background()
	const rows = 2*FileChunk + 500
	svc, w, acc := fileService(t, 10_000*credit)
	spy := &spyRows{n: rows, bad: map[int]bool{5: true, 2400: true}}
	who := domain.Principal{Account: acc, Kind: domain.CredentialPanel, CredentialID: "usr_1", Env: domain.Live}
	base := domain.SendRequest{Channel: domain.SMS}

	dry, err := svc.SendFile(ctx, who, FileSend{Base: base, Rows: spy}, FileOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := len(w.w.tx.messages); got != 0 {
		t.Fatalf("a dry run wrote %d messages", got)
	}
	out, err := svc.SendFile(ctx, who, FileSend{Base: base, Rows: spy}, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rc := out.Receipt
	if rc.Recipients != rows-2 || rc.RejectedCount != 2 || dry.Receipt.Recipients != rc.Recipients || dry.Receipt.Credits != rc.Credits {
		t.Fatalf("receipt %d recipients, %d rejected; dry run %d, %d credits", rc.Recipients, rc.RejectedCount,
			dry.Receipt.Recipients, dry.Receipt.Credits)
	}
	if rc.Rejected[0].Line != 7 || rc.Rejected[0].Field != "to" || rc.Rejected[1].Line != 2402 {
		t.Fatalf("rejected %+v, want lines 7 and 2402 on to", rc.Rejected)
	}
	if spy.largest > FileChunk || w.largest > FileChunk || w.largest == 0 {
		t.Fatalf("rows handed %d at a time, messages inserted %d at a time; want at most %d", spy.largest, w.largest, FileChunk)
	}
	tx := w.w.tx
	var sum int64
	for _, m := range tx.messages {
		sum += m.Charged
		if m.CampaignID != rc.Campaign.ID || m.LeaseOwner != "" {
			t.Fatalf("message %s in campaign %q leased to %q", m.ID, m.CampaignID, m.LeaseOwner)
		}
	}
	spent := acc.Balance - tx.balances[acc.ID]
	if len(tx.messages) != rc.Recipients || spent != sum || sum != rc.Credits || sum != int64(rc.Recipients)*credit {
		t.Fatalf("%d messages; balance moved %d, messages charged %d, receipt %d, want %d each", len(tx.messages), spent, sum,
			rc.Credits, int64(rc.Recipients)*credit)
	}
	if len(tx.campaigns) != 1 || tx.campaigns[0].Total != rc.Recipients {
		t.Fatalf("campaign rows %+v, want one of %d", tx.campaigns, rc.Recipients)
	}
	for i := 1; i < len(tx.messages); i++ {
		if tx.messages[i-1].ID >= tx.messages[i].ID {
			t.Fatalf("messages %d and %d out of the file's order", i-1, i)
		}
	}
}

// A balance that covers the first chunks but not the whole campaign
// refuses it whole: nothing is written or charged.
func TestSendFileShortBalanceWritesNothing(t *testing.T) {
	ctx := context.Background()
	svc, w, acc := fileService(t, 1500*credit)
	who := domain.Principal{Account: acc, Kind: domain.CredentialPanel, CredentialID: "usr_1", Env: domain.Live}
	_, err := svc.SendFile(ctx, who, FileSend{Base: domain.SendRequest{Channel: domain.SMS}, Rows: &spyRows{n: 2000}}, FileOptions{})
	if !errors.Is(err, ErrInsufficientCredits) {
		t.Fatalf("send: %v, want insufficient credits", err)
	}
	if tx := w.w.tx; len(tx.messages) != 0 || len(tx.campaigns) != 0 || len(tx.ledger) != 0 || tx.balances[acc.ID] != acc.Balance {
		t.Fatalf("refused campaign left %d messages, %d campaigns, %d ledger lines, balance %d", len(tx.messages), len(tx.campaigns),
			len(tx.ledger), tx.balances[acc.ID])
	}
	// The test environment is never charged, whatever the balance.
	who.Env = domain.Test
	out, err := svc.SendFile(ctx, who, FileSend{Base: domain.SendRequest{Channel: domain.SMS}, Rows: &spyRows{n: 2000}}, FileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tx := w.w.tx; tx.balances[acc.ID] != acc.Balance || len(tx.messages) != 2000 || out.Receipt.Credits != 2000*credit {
		t.Fatalf("test campaign: balance %d, %d messages, priced %d", tx.balances[acc.ID], len(tx.messages), out.Receipt.Credits)
	}
}

// A retried upload with the same key answers the first one and sends
// nothing more; the same key with another file is a conflict.
func TestSendFileIdempotent(t *testing.T) {
	ctx := context.Background()
	svc, w, acc := fileService(t, 10_000*credit)
	who := domain.Principal{Account: acc, Kind: domain.CredentialPanel, CredentialID: "usr_1", Env: domain.Live}
	key := func(hash string) FileOptions {
		return FileOptions{Idempotency: &FileIdempotency{Key: "k1", RequestHash: hash,
			Response: func(rc FileReceipt) (int, []byte, error) { return 202, []byte(rc.Campaign.ID), nil }}}
	}
	f := FileSend{Base: domain.SendRequest{Channel: domain.SMS}, Rows: &spyRows{n: 10}}
	first, err := svc.SendFile(ctx, who, f, key("h1"))
	if err != nil {
		t.Fatal(err)
	}
	// The store's read of remembered answers is the fake writer's.
	again, err := svc.writeFile(ctx, who, f, key("h1").Idempotency, time.Now())
	if err != nil || again.Replay == nil || string(again.Replay.Response) != first.Receipt.Campaign.ID {
		t.Fatalf("retry: %+v, %v; want the first answer", again, err)
	}
	if _, err := svc.writeFile(ctx, who, f, key("h2").Idempotency, time.Now()); !errors.Is(err, ErrIdempotencyConflict) {
		t.Fatalf("other body: %v, want a conflict", err)
	}
	if n := len(w.w.tx.messages); n != 10 {
		t.Fatalf("%d messages after the retries, want 10", n)
	}
}
