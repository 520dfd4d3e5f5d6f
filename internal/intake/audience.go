package intake

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/channel/whatsapp"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// ChannelStore is what the WhatsApp and RCS rules read at send time.
type ChannelStore interface {
	LastInbounds(ctx context.Context, accountID string, env domain.Environment, channel domain.Channel, phones []string) (map[string]time.Time, error)
	OpenConversations(ctx context.Context, accountID string, env domain.Environment, phones []string, since, until time.Time) (map[string]time.Time, error)
	ConversationsOn(ctx context.Context, accountID string, env domain.Environment, day time.Time) (int, error)
	RCSCapabilities(ctx context.Context, env domain.Environment, phones []string, since time.Time) (map[string]bool, error)
}

// audience is what is known of each recipient of a WhatsApp or RCS send.
type audience struct {
	lastInbound map[string]time.Time // WhatsApp: the recipient's last message
	openConv    map[string]time.Time // WhatsApp: template conversations still open
	rcsCapable  map[string]bool      // RCS: cached device capability (dry runs)
}

// windowOpen: a free-form WhatsApp message may be sent, because the
// recipient wrote to the account within the conversation window.
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
func (s *Service) lookAudience(ctx context.Context, who domain.Principal, typ domain.Channel, phones []string, at time.Time, dry bool) (audience, error) {
	var a audience
	var err error
	switch typ {
	case domain.WhatsApp:
		a.lastInbound, err = s.store.LastInbounds(ctx, who.Account.ID, who.Env, domain.WhatsApp, phones)
		if err != nil {
			return a, err
		}
		a.openConv, err = s.store.OpenConversations(ctx, who.Account.ID, who.Env, phones, at.Add(-whatsapp.ConversationWindow), at)
	case domain.RCS:
		if dry {
			a.rcsCapable, err = s.store.RCSCapabilities(ctx, who.Env, phones, at.Add(-s.capabilityTTL))
		}
	}
	return a, err
}

// refuseClosed refuses a free-form WhatsApp message, whole, when any
// recipient's conversation window is closed, naming each such recipient.
func (a audience) refuseClosed(phones []string, at time.Time) error {
	var closed []int
	for i, p := range phones {
		if !a.windowOpen(p, at) {
			closed = append(closed, i)
		}
	}
	if len(closed) == 0 {
		return nil
	}
	r := &domain.Refusal{Code: "OUTSIDE_CONVERSATION_WINDOW", Err: ErrOutsideWindow}
	names := make([]string, 0, min(len(closed), 10))
	for _, i := range closed {
		p := phones[i]
		msg := "no open WhatsApp conversation window: this number has never written to the account"
		if t, ok := a.lastInbound[p]; ok {
			msg = "no open WhatsApp conversation window: this number last wrote at " + domain.FormatTime(t) + ", more than 24 hours ago"
		}
		r.Fields = append(r.Fields, domain.FieldError{Path: recipientPath(i), Code: domain.FieldInvalid, Message: msg})
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
func dailyLimitRefusal(err error, tier int) *domain.Refusal {
	r := &domain.Refusal{Code: "DAILY_LIMIT_REACHED", Err: err}
	var d *domain.DailyLimitError
	if errors.As(err, &d) {
		r.Detail = fmt.Sprintf("WhatsApp quality tier %d allows %d new template-initiated conversations per UTC day; "+
			"%d were opened on %s and this send would open %d more. The count starts again at 00:00 UTC.",
			tier, d.Limit, d.Used, d.Day, d.Asked)
	} else {
		r.Detail = fmt.Sprintf("The daily limit of new WhatsApp conversations of quality tier %d is reached.", tier)
	}
	return r
}
