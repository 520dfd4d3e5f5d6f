package compliance

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
)

// OptOutStore is what managing opt-outs needs from storage.
type OptOutStore interface {
	OptOuts(ctx context.Context, accountID string, env domain.Environment, after int64, limit int) ([]domain.OptOut, error)
	OptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (domain.OptOut, error)
	AddOptOut(ctx context.Context, o domain.OptOut) (bool, error)
	RemoveOptOut(ctx context.Context, accountID string, env domain.Environment, phone string) (bool, error)
}

// OptOuts lists and edits an account's opt-outs: the integration API's
// list, the operators' command line and the panel all call it. Stop and
// start words change the list on the inbound path (tracking.Tracker).
type OptOuts struct {
	Store OptOutStore
	Now   func() time.Time
}

// Errors of the opt-out list, for the callers to word.
var (
	ErrCursor = errors.New("is not a cursor this API returned")
	ErrPhone  = errors.New("phone")
)

// Page is one page of opt-outs, oldest first; Next is the cursor of the
// next page, "" on the last.
type Page struct {
	OptOuts []domain.OptOut
	Next    string
}

// List pages through an account's opt-outs in one environment, in the
// order they were recorded.
func (o *OptOuts) List(ctx context.Context, accountID string, env domain.Environment, cursor string, limit int) (Page, error) {
	after, err := parseCursor(cursor)
	if err != nil {
		return Page{}, err
	}
	rows, err := o.Store.OptOuts(ctx, accountID, env, after, limit+1)
	if err != nil {
		return Page{}, err
	}
	p := Page{OptOuts: rows}
	if len(rows) > limit {
		p.OptOuts = rows[:limit]
		p.Next = makeCursor(rows[limit-1].Seq)
	}
	return p, nil
}

// Add opts a number out as a person did (source domain.OptOutAccount or
// domain.OptOutOperator); added is false when it already was (the first
// record stays).
func (o *OptOuts) Add(ctx context.Context, accountID string, env domain.Environment, number, source string) (domain.OptOut, bool, error) {
	n, err := phone.Parse(number)
	if err != nil {
		return domain.OptOut{}, false, fmt.Errorf("%w %s", ErrPhone, err)
	}
	rec := domain.OptOut{AccountID: accountID, Env: env, Phone: n.Digits, Source: source, CreatedAt: o.Now().UTC()}
	added, err := o.Store.AddOptOut(ctx, rec)
	if err != nil {
		return domain.OptOut{}, false, err
	}
	rec, err = o.Store.OptOut(ctx, accountID, env, n.Digits)
	return rec, added, err
}

// Remove opts a number in again; removed is false when it was not opted out.
func (o *OptOuts) Remove(ctx context.Context, accountID string, env domain.Environment, number string) (bool, error) {
	n, err := phone.Parse(number)
	if err != nil {
		return false, fmt.Errorf("%w %s", ErrPhone, err)
	}
	return o.Store.RemoveOptOut(ctx, accountID, env, n.Digits)
}

// Cursors are opaque to clients: the position in the write order.
func makeCursor(seq int64) string {
	return base64.RawURLEncoding.EncodeToString([]byte("opt:" + strconv.FormatInt(seq, 10)))
}

func parseCursor(c string) (int64, error) {
	if c == "" {
		return 0, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || !strings.HasPrefix(string(b), "opt:") {
		return 0, ErrCursor
	}
	seq, err := strconv.ParseInt(strings.TrimPrefix(string(b), "opt:"), 10, 64)
	if err != nil || seq < 0 {
		return 0, ErrCursor
	}
	return seq, nil
}

// Limits of the settings.
const (
	MaxRetentionDays = 3650
	MaxReplyChars    = 1000
)

// SettingsStore is what reading and changing an account's compliance
// settings needs.
type SettingsStore interface {
	Account(ctx context.Context, id string) (domain.Account, error)
	SetCompliance(ctx context.Context, accountID string, c domain.Compliance) error
}

// Settings reads an account's compliance settings.
func Settings(ctx context.Context, st SettingsStore, accountID string) (domain.Compliance, error) {
	a, err := st.Account(ctx, accountID)
	if err != nil {
		return domain.Compliance{}, err
	}
	return a.Compliance, nil
}

// SetSettings checks and stores an account's compliance settings and
// returns them as stored (the window in its normal form). The command line
// calls it, and the panel will.
func SetSettings(ctx context.Context, st SettingsStore, accountID string, c domain.Compliance) (domain.Compliance, error) {
	c, err := CheckSettings(c)
	if err != nil {
		return domain.Compliance{}, err
	}
	if err := st.SetCompliance(ctx, accountID, c); err != nil {
		return domain.Compliance{}, err
	}
	return c, nil
}

// CheckSettings validates settings and normalises them; every problem is
// named in the error.
func CheckSettings(c domain.Compliance) (domain.Compliance, error) {
	var errs []error
	w, err := ParseWindow(c.QuietHours)
	if err != nil {
		errs = append(errs, err)
	}
	c.QuietHours = w.String()
	if c.RetentionDays < 0 || c.RetentionDays > MaxRetentionDays {
		errs = append(errs, fmt.Errorf("retention days must be 0 (keep) to %d", MaxRetentionDays))
	}
	for _, r := range []struct {
		name string
		text *string
	}{{"opt-out reply", &c.OptOutReply}, {"opt-in reply", &c.OptInReply}} {
		*r.text = strings.TrimSpace(*r.text)
		if err := checkReply(*r.text); err != nil {
			errs = append(errs, fmt.Errorf("%s %w", r.name, err))
		}
	}
	return c, errors.Join(errs...)
}

// checkReply holds a confirmation text to the rules of every channel it
// may go out on: WhatsApp's and RCS's length, SMS's segments.
func checkReply(text string) error {
	switch {
	case text == "":
		return nil
	case !utf8.ValidString(text):
		return errors.New("is not valid UTF-8")
	case utf8.RuneCountInString(text) > MaxReplyChars:
		return fmt.Errorf("must be at most %d characters", MaxReplyChars)
	}
	for _, r := range text {
		if r < 0x20 && r != '\n' && r != '\t' {
			return errors.New("must not hold control characters other than newline and tab")
		}
	}
	if a := sms.Analyze(text); a.Segments > sms.MaxSegments {
		return fmt.Errorf("is %d SMS segments long (%s); at most %d", a.Segments, a.Encoding, sms.MaxSegments)
	}
	return nil
}

// Redaction is the redactor as the store applies it.
func (r *Redactor) Redaction() domain.Redaction {
	return domain.Redaction{Phone: r.Phone, EventBody: r.EventBody}
}
