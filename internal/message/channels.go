package message

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"msgsvc/internal/channel/sms"
	"msgsvc/internal/channel/whatsapp"
	"msgsvc/internal/store"
)

// ChannelStore is what the WhatsApp and RCS rules read at send time.
type ChannelStore interface {
	LastInbounds(ctx context.Context, accountID, env, channel string, phones []string) (map[string]time.Time, error)
	OpenConversations(ctx context.Context, accountID, env string, phones []string, since, until time.Time) (map[string]time.Time, error)
	ConversationsOn(ctx context.Context, accountID, env string, day time.Time) (int, error)
	RCSCapabilities(ctx context.Context, env string, phones []string, since time.Time) (map[string]bool, error)
}

// Errors a Refusal wraps.
var (
	ErrOutsideWindow = errors.New("outside the WhatsApp conversation window")
	ErrDailyLimit    = store.ErrDailyLimit
)

// Refusal is a send refused by a channel rule rather than by the shape of a
// field: 422 OUTSIDE_CONVERSATION_WINDOW or 429 DAILY_LIMIT_REACHED. The API
// shows Status, Code, Detail and Fields as they are.
type Refusal struct {
	Status int
	Code   string
	Detail string
	Fields []FieldError
	Err    error
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Detail }

// Unwrap gives ErrOutsideWindow or ErrDailyLimit.
func (r *Refusal) Unwrap() error { return r.Err }

// audience is what is known of each recipient of a WhatsApp or RCS send.
type audience struct {
	lastInbound map[string]time.Time // WhatsApp: the recipient's last message
	openConv    map[string]time.Time // WhatsApp: template conversations still open
	rcsCapable  map[string]bool      // RCS: cached device capability (dry runs)
}

// windowOpen: a free-form WhatsApp message may be sent (CONTRACT section 2).
func (a audience) windowOpen(phone string, at time.Time) bool {
	t, ok := a.lastInbound[phone]
	return ok && at.Sub(t) < whatsapp.ConversationWindow
}

// newConversation: a message to phone at this time starts a new, charged
// conversation. A conversation is open while the recipient's own message
// or a template sent to them is less than 24 hours old.
func (a audience) newConversation(phone string, at time.Time) bool {
	if a.windowOpen(phone, at) {
		return false
	}
	_, open := a.openConv[phone]
	return !open
}

// lookAudience reads what the channel rules need about the recipients.
func (s *Service) lookAudience(ctx context.Context, caller Caller, typ string, phones []string, at time.Time, dry bool) (audience, error) {
	var a audience
	var err error
	switch typ {
	case WhatsApp:
		a.lastInbound, err = s.store.LastInbounds(ctx, caller.Account.ID, caller.Key.Env, WhatsApp, phones)
		if err != nil {
			return a, err
		}
		a.openConv, err = s.store.OpenConversations(ctx, caller.Account.ID, caller.Key.Env, phones, at.Add(-whatsapp.ConversationWindow), at)
	case RCS:
		if dry {
			a.rcsCapable, err = s.store.RCSCapabilities(ctx, caller.Key.Env, phones, at.Add(-s.capabilityTTL))
		}
	}
	return a, err
}

// windowRefusal names the recipients a free-form WhatsApp message cannot
// reach, the whole request being refused.
func windowRefusal(closed []int, fields func(i int) string, phones []string, last map[string]time.Time) *Refusal {
	r := &Refusal{Status: http.StatusUnprocessableEntity, Code: "OUTSIDE_CONVERSATION_WINDOW", Err: ErrOutsideWindow}
	names := make([]string, 0, min(len(closed), 10))
	for _, i := range closed {
		p := phones[i]
		msg := "no open WhatsApp conversation window: this number has never written to the account"
		if t, ok := last[p]; ok {
			msg = "no open WhatsApp conversation window: this number last wrote at " + Format(t) + ", more than 24 hours ago"
		}
		r.Fields = append(r.Fields, FieldError{Field: fields(i), Message: msg})
		if len(names) < 10 {
			names = append(names, p)
		}
	}
	more := ""
	if len(closed) > len(names) {
		more = fmt.Sprintf(" and %d more", len(closed)-len(names))
	}
	r.Detail = fmt.Sprintf("A free-form WhatsApp message can only be sent within 24 hours of the recipient's last message; "+
		"send a template instead. Outside the window: %s%s.", strings.Join(names, ", "), more)
	return r
}

// dailyLimitRefusal explains a refused send over the quality tier's limit.
func dailyLimitRefusal(err error, tier int) *Refusal {
	r := &Refusal{Status: http.StatusTooManyRequests, Code: "DAILY_LIMIT_REACHED", Err: err}
	var d *store.DailyLimitError
	if errors.As(err, &d) {
		r.Detail = fmt.Sprintf("WhatsApp quality tier %d allows %d new template-initiated conversations per UTC day; "+
			"%d were opened on %s and this send would open %d more. The count starts again at 00:00 UTC.",
			tier, d.Limit, d.Used, d.Day, d.Asked)
	} else {
		r.Detail = fmt.Sprintf("The daily limit of new WhatsApp conversations of quality tier %d is reached.", tier)
	}
	return r
}

// fallbackPlan is how an RCS message goes out as SMS when the device cannot
// take RCS: resolved and priced when the send is accepted, and kept in the
// message's content, so that later changes of the account's settings or
// prices never change what an accepted message costs.
type fallbackPlan struct {
	Type       string `json:"type"`
	Message    string `json:"message"`
	Segments   int    `json:"segments"`
	Encoding   string `json:"encoding"`
	SMSCredits int64  `json:"smsCredits"` // price as SMS, micro-credits
	RCSCredits int64  `json:"rcsCredits"` // price as RCS
}

// fallbackOf reads a message's fallback plan, if it has one.
func fallbackOf(m store.Message) (fallbackPlan, bool) {
	if m.Type != RCS || !strings.Contains(m.Content, `"fallback"`) {
		return fallbackPlan{}, false
	}
	var c struct {
		Fallback *fallbackPlan `json:"fallback"`
	}
	if err := json.Unmarshal([]byte(m.Content), &c); err != nil || c.Fallback == nil || c.Fallback.Type != SMS {
		return fallbackPlan{}, false
	}
	return *c.Fallback, true
}

// fallbackText decides the SMS text of an RCS send's fallback: the
// fallback's own message, else the RCS text. It returns false when the send
// has no fallback (neither asked for nor the account's default).
func fallbackText(verr *ValidationError, account store.Account, req SendRequest, chk checked) (sms.Analysis, string, bool) {
	if chk.fallback == nil && !account.RCSFallback {
		return sms.Analysis{}, "", false
	}
	text, field := req.Message, "message"
	if chk.fallback != nil && chk.fallback.Message != nil {
		text, field = *chk.fallback.Message, "fallback.message"
	}
	a := sms.Analyze(text)
	if a.Segments > sms.MaxSegments {
		hint := ""
		if field == "message" {
			hint = "; give a shorter fallback.message for the SMS"
		}
		verr.add(field, "is %d SMS segments long (%s), too long for the SMS fallback of at most %d%s",
			a.Segments, a.Encoding, sms.MaxSegments, hint)
	}
	return a, text, true
}
