package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/id"
)

// A campaign from a file is one campaign of up to a hundred thousand
// messages, each with its own text. It is validated row by row (a row that
// fails is reported by its line and left out, the others go) and then
// written in one transaction, a chunk of FileChunk rows at a time, each
// chunk through the same commit as every send (ledger, usage, alerts,
// opt-outs, a sub-account's chain). The charge is all or nothing: if the
// balance does not cover a chunk, the transaction is rolled back and the
// upload is refused with ErrInsufficientCredits, nothing sent or charged.
// The rows are never all in memory: the caller keeps them (on disk) and
// hands them over a chunk at a time, as often as asked.

// FileChunk is the number of rows planned and written together.
const FileChunk = 1000

// MaxRejectedShown is how many refused rows a receipt lists; it counts
// them all.
const MaxRejectedShown = 100

// FileRow is one recipient of a campaign from a file: its line in the
// file, its number and its text (the template filled in), or the problem
// its row has already.
type FileRow struct {
	Line    int
	To      string
	Text    string
	Problem string
}

// FileRows gives a campaign's rows in order, n at a time; the slice
// passed may be reused between calls. Each may be called more than once.
type FileRows interface {
	Each(ctx context.Context, n int, fn func([]FileRow) error) error
}

// FileSend is a campaign from a file: Base says what every message shares
// (channel, sender, schedule, validity, reference, callback, origin; its
// Recipients and Text are ignored) and Rows what differs.
type FileSend struct {
	Base domain.SendRequest
	Rows FileRows
}

// RowRefusal is a row left out of a campaign: its line, a stable code
// (VALIDATION_ERROR, RECIPIENT_OPTED_OUT), the field ("to", "text", "file")
// and what is wrong.
type RowRefusal struct {
	Line   int
	Code   string
	Field  string
	Detail string
}

// FileReceipt is what a campaign from a file did (or, dry, would do).
type FileReceipt struct {
	Campaign   domain.Campaign // zero on a dry run
	DryRun     bool
	Recipients int   // rows accepted
	Credits    int64 // their total price, micro-credits (what a live send is charged)
	// Balance is the account's balance when a dry run read it.
	Balance int64
	// Rejected lists the first MaxRejectedShown rows left out;
	// RejectedCount counts them all.
	Rejected      []RowRefusal
	RejectedCount int
}

// FileOptions come with a campaign from a file besides its rows.
type FileOptions struct {
	DryRun bool
	// Idempotency makes the upload answerable again: the same key with
	// the same file and fields gets the remembered answer, and nothing
	// is sent twice. Response renders the answer to remember.
	Idempotency *FileIdempotency
}

// FileIdempotency is an upload's Idempotency-Key.
type FileIdempotency struct {
	Key         string
	RequestHash string
	Response    func(FileReceipt) (status int, body []byte, err error)
}

// FileOutcome is a new receipt, or the remembered answer to an earlier
// upload with the same key.
type FileOutcome struct {
	Receipt FileReceipt
	Replay  *domain.Idempotency
}

// idempotencyReader is the store's read of a remembered answer, which
// lets a retried upload be answered before any row is read again.
type idempotencyReader interface {
	Idempotency(ctx context.Context, keyID, key string) (domain.Idempotency, error)
}

// replayed rolls back a campaign's transaction whose key turned out taken.
type replayed struct{ prev domain.Idempotency }

func (r *replayed) Error() string { return "idempotency key already used" }

// SendFile validates, prices and writes a campaign from a file.
func (s *Service) SendFile(ctx context.Context, who domain.Principal, f FileSend, opt FileOptions) (FileOutcome, error) {
	if who.Account.Suspended() {
		return FileOutcome{}, ErrSuspended
	}
	now := s.now().UTC()
	if err := s.checkBase(ctx, who, f.Base, now); err != nil {
		return FileOutcome{}, err
	}
	if k := opt.Idempotency; k != nil && !opt.DryRun {
		if rd, ok := s.store.(idempotencyReader); ok {
			prev, err := rd.Idempotency(ctx, who.CredentialID, k.Key)
			switch {
			case err == nil && prev.RequestHash != k.RequestHash:
				return FileOutcome{}, ErrIdempotencyConflict
			case err == nil:
				return FileOutcome{Replay: &prev}, nil
			case !errors.Is(err, domain.ErrNotFound):
				return FileOutcome{}, err
			}
		}
	}
	if opt.DryRun {
		return s.dryRunFile(ctx, who, f, now)
	}
	return s.writeFile(ctx, who, f, opt.Idempotency, now)
}

// checkBase checks what every row shares (channel, sender, schedule, …)
// once, so that a mistake there refuses the upload rather than each row.
func (s *Service) checkBase(ctx context.Context, who domain.Principal, base domain.SendRequest, now time.Time) error {
	switch base.Channel {
	case domain.SMS, domain.RCS:
	case domain.WhatsApp:
		v := &domain.ValidationError{}
		v.AddAt(pathChannel, domain.FieldInvalid, "must be SMS or RCS: a campaign from a file sends free text, which WhatsApp allows only inside conversations")
		return v
	}
	base.Recipients, base.Text = nil, ""
	_, err := s.validate(ctx, who, base, now)
	v, ok := domain.IsValidation(err)
	if !ok {
		return err
	}
	out := &domain.ValidationError{Detail: v.Detail}
	for _, fe := range v.Fields {
		if !rowPath(fe.Path) {
			out.Fields = append(out.Fields, fe)
		}
	}
	if len(out.Fields) == 0 {
		return nil
	}
	return out
}

// rowPath: a problem of this path is a row's own (its number or text).
func rowPath(p string) bool {
	return p == pathText || p == pathRecipients || strings.HasPrefix(p, pathRecipients+"[")
}

// fileState is what planning a file's rows has learned so far.
type fileState struct {
	rc    FileReceipt
	seen  map[string]int // numbers already in the campaign, by line
	chunk int
}

func newFileState() *fileState { return &fileState{seen: map[string]int{}} }

func (st *fileState) reject(r RowRefusal) {
	st.rc.RejectedCount++
	if len(st.rc.Rejected) < MaxRejectedShown {
		st.rc.Rejected = append(st.rc.Rejected, r)
	}
}

// planChunk plans a chunk's rows as one-recipient sends with their own
// text, in the campaign c; rows that fail are rejected. optedOut reads the
// opt-out list (outside or inside the transaction).
func (s *Service) planChunk(ctx context.Context, who domain.Principal, base domain.SendRequest, c domain.Campaign,
	rows []FileRow, st *fileState, now time.Time,
	optedOut func(ctx context.Context, accountID string, env domain.Environment, phones []string) (map[string]bool, error),
) ([]domain.Message, error) {
	// Ids of one chunk sort in row order, and each chunk's after the
	// previous one's: the campaign's messages list in the file's order.
	ids := id.Sequence(id.Message, now.Add(time.Duration(st.chunk)*time.Millisecond), len(rows))
	st.chunk++
	msgs := make([]domain.Message, 0, len(rows))
	lines := make([]int, 0, len(rows))
	for i, row := range rows {
		if row.Problem != "" {
			st.reject(RowRefusal{Line: row.Line, Code: "VALIDATION_ERROR", Field: "file", Detail: row.Problem})
			continue
		}
		req := base
		req.Recipients, req.Single, req.Text = []string{row.To}, true, row.Text
		r, err := s.validate(ctx, who, req, now)
		if v, ok := domain.IsValidation(err); ok {
			st.reject(rowRefusal(row.Line, v))
			continue
		}
		if err != nil {
			return nil, err
		}
		if j, dup := st.seen[r.numbers[0].Digits]; dup {
			st.reject(RowRefusal{Line: row.Line, Code: "VALIDATION_ERROR", Field: "to",
				Detail: fmt.Sprintf("repeats the number of line %d; each number may appear once per campaign", j)})
			continue
		}
		// The account's allowed countries hold for a file as for any send:
		// a row elsewhere is left out, by line.
		if err := geo(who.Account, r.numbers); err != nil {
			if rf := (*domain.Refusal)(nil); errors.As(err, &rf) {
				st.reject(RowRefusal{Line: row.Line, Code: rf.Code, Field: "to", Detail: rf.Detail})
				continue
			}
			return nil, err
		}
		r.noLease = true
		p, err := s.plan(ctx, who, r, now, false)
		if rf := (*domain.Refusal)(nil); errors.As(err, &rf) {
			st.reject(RowRefusal{Line: row.Line, Code: rf.Code, Field: "to", Detail: rf.Detail})
			continue
		}
		if err != nil {
			return nil, err
		}
		st.seen[r.numbers[0].Digits] = row.Line
		m := p.messages[0]
		m.ID, m.CampaignID = ids[i], c.ID
		msgs = append(msgs, m)
		lines = append(lines, row.Line)
	}
	if len(msgs) == 0 {
		return msgs, nil
	}
	phones := make([]string, len(msgs))
	for i, m := range msgs {
		phones[i] = m.To
	}
	out, err := optedOut(ctx, who.Account.ID, who.Env, phones)
	if err != nil {
		return nil, err
	}
	kept := msgs[:0]
	for i, m := range msgs {
		if out[m.To] {
			st.reject(RowRefusal{Line: lines[i], Code: "RECIPIENT_OPTED_OUT", Field: "to",
				Detail: "the recipient answered a stop word: sends to this number are refused until it is opted back in"})
			continue
		}
		kept = append(kept, m)
		st.rc.Recipients++
		st.rc.Credits += m.Credits
	}
	return kept, nil
}

// rowRefusal names a row's validation problem by the file's words.
func rowRefusal(line int, v *domain.ValidationError) RowRefusal {
	r := RowRefusal{Line: line, Code: "VALIDATION_ERROR", Detail: v.Error()}
	if len(v.Fields) > 0 {
		fe := v.Fields[0]
		r.Field, r.Detail = "text", "text "+fe.Message
		if fe.Path != pathText {
			r.Field, r.Detail = "to", "to "+fe.Message
		}
	}
	return r
}

// newFileCampaign is the campaign a file's messages belong to.
func newFileCampaign(who domain.Principal, base domain.SendRequest, now time.Time) domain.Campaign {
	return domain.Campaign{ID: id.New(id.Campaign, now), AccountID: who.Account.ID, KeyID: who.CredentialID, Env: who.Env,
		Type: base.Channel, CallbackURL: base.CallbackURL, CreatedAt: now}
}

// dryRunFile plans every row and checks the balance, writing nothing.
func (s *Service) dryRunFile(ctx context.Context, who domain.Principal, f FileSend, now time.Time) (FileOutcome, error) {
	st := newFileState()
	c := newFileCampaign(who, f.Base, now)
	err := f.Rows.Each(ctx, FileChunk, func(rows []FileRow) error {
		_, err := s.planChunk(ctx, who, f.Base, c, rows, st, now, s.store.OptedOut)
		return err
	})
	if err != nil {
		return FileOutcome{}, err
	}
	a, err := s.store.Account(ctx, who.Account.ID)
	if err != nil {
		return FileOutcome{}, err
	}
	st.rc.DryRun, st.rc.Balance = true, a.Balance
	return FileOutcome{Receipt: st.rc}, nil
}

// writeFile writes the campaign in one transaction, chunk by chunk.
func (s *Service) writeFile(ctx context.Context, who domain.Principal, f FileSend, key *FileIdempotency, now time.Time) (FileOutcome, error) {
	var st *fileState
	var c domain.Campaign
	dueNow := false
	err := s.writer.Write(ctx, func(tx SendTx) error {
		// A transaction run again (after a conflict) starts afresh.
		st, c = newFileState(), newFileCampaign(who, f.Base, now)
		err := f.Rows.Each(ctx, FileChunk, func(rows []FileRow) error {
			msgs, err := s.planChunk(ctx, who, f.Base, c, rows, st, now, tx.OptedOut)
			if err != nil || len(msgs) == 0 {
				return err
			}
			for _, m := range msgs {
				dueNow = dueNow || !m.NextAttemptAt.After(now)
			}
			snd := pendingSend{campaign: c, messages: msgs, alerts: alertsOf(who.Account), authVersion: who.AuthVersion,
				parentID: who.Account.ParentID, chunk: true, guard: guarded(who.Account)}
			priced := sumCredits(msgs)
			res, err := s.commitGroup(ctx, tx, []pendingSend{snd})
			if err != nil {
				return err
			}
			// A message the fraud guard blocked is charged nothing (the
			// guard zeroes its price in place): the receipt says what the
			// campaign really cost.
			st.rc.Credits -= priced - sumCredits(msgs)
			return res[0].err
		})
		if err != nil {
			return err
		}
		if st.rc.Recipients == 0 {
			v := &domain.ValidationError{Detail: "file has no row that can be sent"}
			v.Add("file", "has no row that can be sent (%d rejected)", st.rc.RejectedCount)
			return v
		}
		c.Total = st.rc.Recipients
		if err := tx.InsertCampaign(ctx, c); err != nil {
			return err
		}
		st.rc.Campaign = c
		if key == nil {
			return nil
		}
		status, body, err := key.Response(st.rc)
		if err != nil {
			return fmt.Errorf("render the response to remember: %w", err)
		}
		prev, fresh, err := tx.ClaimIdempotency(ctx, domain.Idempotency{KeyID: who.CredentialID, Key: key.Key,
			RequestHash: key.RequestHash, StatusCode: status, Response: body, CreatedAt: now})
		if err != nil {
			return err
		}
		if !fresh {
			return &replayed{prev: prev}
		}
		return nil
	})
	if rp := (*replayed)(nil); errors.As(err, &rp) {
		if rp.prev.RequestHash != key.RequestHash {
			return FileOutcome{}, ErrIdempotencyConflict
		}
		return FileOutcome{Replay: &rp.prev}, nil
	}
	if err != nil {
		return FileOutcome{}, err
	}
	if dueNow {
		s.wake()
	}
	return FileOutcome{Receipt: st.rc}, nil
}

func sumCredits(msgs []domain.Message) int64 {
	var n int64
	for _, m := range msgs {
		n += m.Credits
	}
	return n
}
