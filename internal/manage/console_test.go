package manage

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/ledger"
	"github.com/msgsvc/msgsvc/internal/user"
)

// pagedStore holds an account's messages and ledger lines and counts the
// queries an export makes and the largest page it asked for; any other
// area fails loudly (nil Store).
type pagedStore struct {
	Store
	msgs    []domain.Message // newest first
	lines   []ledger.Entry   // oldest first
	queries int
	largest int
}

func (f *pagedStore) Account(_ context.Context, id string) (domain.Account, error) {
	if id == "acc_a" {
		return domain.Account{ID: id}, nil
	}
	return domain.Account{}, domain.ErrNotFound
}

func (f *pagedStore) SearchMessages(_ context.Context, q domain.MessageFilter) ([]domain.Message, error) {
	f.queries++
	f.largest = max(f.largest, q.Limit)
	start := 0
	if q.Before != "" {
		for i, m := range f.msgs {
			if m.ID == q.Before {
				start = i + 1
			}
		}
	}
	end := min(start+q.Limit, len(f.msgs))
	return append([]domain.Message(nil), f.msgs[start:end]...), nil
}

func (f *pagedStore) LedgerRange(_ context.Context, _ string, _, _ time.Time, after string, limit int) ([]ledger.Entry, error) {
	f.queries++
	f.largest = max(f.largest, limit)
	start := 0
	for i, l := range f.lines {
		if l.ID == after {
			start = i + 1
		}
	}
	end := min(start+limit, len(f.lines))
	return append([]ledger.Entry(nil), f.lines[start:end]...), nil
}

// TestExportsReadInPages: an export of 3N+1 rows reads them in four
// queries of at most N rows, hands each page on before reading the next,
// and hands every row once, in order; memory is one page whatever the
// export's size. An empty export still hands one (empty) page, so that
// its header row is written.
func TestExportsReadInPages(t *testing.T) {
	const n = 7
	f := &pagedStore{}
	for i := 3*n + 1; i > 0; i-- {
		f.msgs = append(f.msgs, domain.Message{ID: fmt.Sprintf("msg_%03d", i), AccountID: "acc_a", Body: "secret"})
		f.lines = append(f.lines, ledger.Entry{ID: fmt.Sprintf("led_%03d", 3*n+2-i)})
	}
	s := New(Config{Store: f, ExportPage: n, Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
	admin := Actor{UserID: "usr_a", Role: user.Admin, AccountID: "acc_a"}
	ctx := context.Background()

	var got []string
	var pages []int
	err := s.ExportMessages(ctx, admin, "", MessageQuery{}, false, func(p []domain.Message) error {
		pages = append(pages, len(p))
		for _, m := range p {
			if m.Body != "" {
				t.Errorf("%s handed with its text", m.ID)
			}
			got = append(got, m.ID)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if f.queries != 4 || f.largest != n || fmt.Sprint(pages) != fmt.Sprint([]int{n, n, n, 1}) || len(got) != 3*n+1 {
		t.Fatalf("messages: %d queries of at most %d, pages %v, %d rows", f.queries, f.largest, pages, len(got))
	}
	for i, id := range got {
		if id != f.msgs[i].ID {
			t.Fatalf("row %d is %s, want %s", i, id, f.msgs[i].ID)
		}
	}

	f.queries, f.largest, pages = 0, 0, nil
	if err := s.ExportLedger(ctx, admin, "", ExportRange{}, func(p []ledger.Entry) error {
		pages = append(pages, len(p))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if f.queries != 4 || f.largest != n || fmt.Sprint(pages) != fmt.Sprint([]int{n, n, n, 1}) {
		t.Fatalf("ledger: %d queries of at most %d, pages %v", f.queries, f.largest, pages)
	}

	// Exactly N rows: one more query finds none and hands no page; none
	// at all: one empty page.
	for _, rows := range []int{n, 0} {
		f.msgs, f.queries, pages = f.msgs[:rows], 0, nil
		if err := s.ExportMessages(ctx, admin, "", MessageQuery{}, false, func(p []domain.Message) error {
			pages = append(pages, len(p))
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		want := map[int][]int{n: {n}, 0: {0}}[rows]
		if fmt.Sprint(pages) != fmt.Sprint(want) {
			t.Errorf("%d rows: pages %v, want %v", rows, pages, want)
		}
	}

	// A page the caller cannot write stops the export there.
	f.msgs = f.msgs[:0]
	for i := 0; i < 3*n; i++ {
		f.msgs = append(f.msgs, domain.Message{ID: fmt.Sprintf("msg_%03d", 100-i)})
	}
	f.queries = 0
	stop := fmt.Errorf("client went away")
	if err := s.ExportMessages(ctx, admin, "", MessageQuery{}, false, func([]domain.Message) error { return stop }); err != stop || f.queries != 1 {
		t.Errorf("a failed page: %v after %d queries", err, f.queries)
	}

	// Whose: a developer, another account, and a user asking for all.
	dev := Actor{UserID: "usr_d", Role: user.Developer, AccountID: "acc_a"}
	for name, call := range map[string]func() error{
		"developer": func() error {
			return s.ExportMessages(ctx, dev, "", MessageQuery{}, false, func([]domain.Message) error { return nil })
		},
		"developer's ledger": func() error {
			return s.ExportLedger(ctx, dev, "", ExportRange{}, func([]ledger.Entry) error { return nil })
		},
		"all accounts": func() error {
			return s.ExportMessages(ctx, admin, "", MessageQuery{}, true, func([]domain.Message) error { return nil })
		},
	} {
		if err := call(); err != ErrForbidden {
			t.Errorf("%s: %v, want ErrForbidden", name, err)
		}
	}
}
