package whatsapp

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// The notification the platform posts to the webhook: entries of changes;
// a "messages" change carries statuses of our messages and messages users
// sent. Only what msgsvc reads is declared; the rest is ignored.
type notification struct {
	Object string `json:"object"`
	Entry  []struct {
		Changes []struct {
			Field string      `json:"field"`
			Value changeValue `json:"value"`
		} `json:"changes"`
	} `json:"entry"`
}

type changeValue struct {
	Metadata struct {
		DisplayPhoneNumber string `json:"display_phone_number"`
		PhoneNumberID      string `json:"phone_number_id"`
	} `json:"metadata"`
	Statuses []struct {
		ID        string       `json:"id"`
		Status    string       `json:"status"`
		Timestamp string       `json:"timestamp"`
		Errors    []graphError `json:"errors"`
	} `json:"statuses"`
	Messages []inMessage `json:"messages"`
}

// inMessage is a message a WhatsApp user sent.
type inMessage struct {
	From      string `json:"from"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"`
	Type      string `json:"type"`
	Text      *struct {
		Body string `json:"body"`
	} `json:"text"`
	Button *struct {
		Payload string `json:"payload"`
		Text    string `json:"text"`
	} `json:"button"`
	Interactive *struct {
		Type        string  `json:"type"`
		ButtonReply *choice `json:"button_reply"`
		ListReply   *choice `json:"list_reply"`
	} `json:"interactive"`
	Image    *inMedia `json:"image"`
	Video    *inMedia `json:"video"`
	Document *inMedia `json:"document"`
	Audio    *inMedia `json:"audio"`
	Sticker  *inMedia `json:"sticker"`
	Location *struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
		Name      string  `json:"name"`
		Address   string  `json:"address"`
	} `json:"location"`
	Contacts []struct {
		Name struct {
			FormattedName string `json:"formatted_name"`
		} `json:"name"`
		Phones []struct {
			Phone string `json:"phone"`
		} `json:"phones"`
	} `json:"contacts"`
	Reaction *struct {
		Emoji string `json:"emoji"`
	} `json:"reaction"`
	Order *struct {
		Text  string `json:"text"`
		Items []struct {
			ProductRetailerID string `json:"product_retailer_id"`
			Quantity          int    `json:"quantity"`
		} `json:"product_items"`
	} `json:"order"`
}

type choice struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

type inMedia struct {
	ID       string `json:"id"`
	MIMEType string `json:"mime_type"`
	Caption  string `json:"caption"`
	Filename string `json:"filename"`
}

// parsed is what one notification reports.
type parsed struct {
	statuses []provider.Status
	inbound  []provider.Inbound
}

// errNotNotification is a body that is not the platform's notification.
var errNotNotification = errors.New("not a WhatsApp Business Account notification")

// parse reads a notification. mediaBase is the Graph API base URL that
// media ids are appended to for the integrator; now stands in for a
// missing or unreadable timestamp.
func parse(body []byte, mediaBase string, now time.Time) (parsed, error) {
	var n notification
	if err := json.Unmarshal(body, &n); err != nil {
		return parsed{}, fmt.Errorf("%w: %v", errNotNotification, err)
	}
	if n.Object != "whatsapp_business_account" {
		return parsed{}, fmt.Errorf("%w: object %q", errNotNotification, n.Object)
	}
	var out parsed
	for _, e := range n.Entry {
		for _, ch := range e.Changes {
			if ch.Field != "messages" {
				continue // account, template and group updates are not message traffic
			}
			out.add(ch.Value, mediaBase, now)
		}
	}
	return out, nil
}

func (p *parsed) add(v changeValue, mediaBase string, now time.Time) {
	for _, s := range v.Statuses {
		st, ok := statusOf[s.Status]
		if !ok || s.ID == "" {
			continue // e.g. "deleted", "warning": not a step of delivery
		}
		r := provider.Status{Ref: s.ID, Status: st, At: unixTime(s.Timestamp, now)}
		if st == domain.Failed {
			g := graphError{Title: "failed without a reason"}
			if len(s.Errors) > 0 {
				g = s.Errors[0]
			}
			r.ErrorCode, r.ErrorMessage = statusErrorCode(g)
		}
		p.statuses = append(p.statuses, r)
	}
	to := onlyDigits(phone.Address(v.Metadata.DisplayPhoneNumber))
	for _, m := range v.Messages {
		// A sender without a digit (absent, "+", a name) cannot be
		// answered or matched to a number, so it is not a reply.
		from := onlyDigits(phone.Address(m.From))
		text, ok := m.text(mediaBase)
		if !ok || from == "" {
			continue
		}
		p.inbound = append(p.inbound, provider.Inbound{From: from, To: to, Channel: domain.WhatsApp,
			Body: text, At: unixTime(m.Timestamp, now), Ref: m.ID})
	}
}

var statusOf = map[string]domain.Status{"sent": domain.Sent, "delivered": domain.Delivered, "read": domain.Read, "failed": domain.Failed}

// text is what the integrator receives as the reply's message. Choices
// come back as what the integrator sent: a reply button's payload, a list
// row's id. Media is a bracketed line "[image image/jpeg] <link>" after
// any caption; the link is the Graph API's media object, which answers a
// GET with the access token with a short-lived download URL. ok is false
// for what is not a user's message (system notices, welcome requests).
func (m inMessage) text(mediaBase string) (string, bool) {
	switch m.Type {
	case "text":
		if m.Text != nil {
			return m.Text.Body, true
		}
	case "button":
		if m.Button != nil {
			return cmp.Or(m.Button.Payload, m.Button.Text), true
		}
	case "interactive":
		if i := m.Interactive; i != nil {
			for _, c := range []*choice{i.ButtonReply, i.ListReply} {
				if c != nil {
					return cmp.Or(c.ID, c.Title), true
				}
			}
			return "[interactive " + i.Type + "]", true
		}
	case "image", "video", "document", "audio", "sticker":
		if md := m.media(); md != nil {
			return md.describe(m.Type, mediaBase), true
		}
	case "location":
		if l := m.Location; l != nil {
			return strings.TrimSpace(fmt.Sprintf("[location %s,%s] %s", strconv.FormatFloat(l.Latitude, 'f', -1, 64),
				strconv.FormatFloat(l.Longitude, 'f', -1, 64), strings.Trim(l.Name+", "+l.Address, ", "))), true
		}
	case "contacts":
		var parts []string
		for _, c := range m.Contacts {
			s := c.Name.FormattedName
			for _, ph := range c.Phones {
				s += " " + ph.Phone
			}
			parts = append(parts, strings.TrimSpace(s))
		}
		return "[contacts] " + strings.Join(parts, "; "), true
	case "reaction":
		if m.Reaction != nil && m.Reaction.Emoji != "" {
			return "[reaction] " + m.Reaction.Emoji, true
		}
	case "order":
		if o := m.Order; o != nil {
			var items []string
			for _, it := range o.Items {
				items = append(items, fmt.Sprintf("%d × %s", it.Quantity, it.ProductRetailerID))
			}
			return strings.TrimSpace("[order] " + strings.Join(items, ", ") + " " + o.Text), true
		}
	case "unsupported", "unknown":
		return "[unsupported message]", true
	}
	return "", false
}

func (m inMessage) media() *inMedia {
	for _, md := range []*inMedia{m.Image, m.Video, m.Document, m.Audio, m.Sticker} {
		if md != nil && md.ID != "" {
			return md
		}
	}
	return nil
}

func (md inMedia) describe(kind, mediaBase string) string {
	tag := kind
	if md.Filename != "" {
		tag += " " + md.Filename
	}
	if md.MIMEType != "" {
		tag += " " + md.MIMEType
	}
	line := "[" + tag + "] " + mediaBase + "/" + md.ID
	if md.Caption == "" {
		return line
	}
	return md.Caption + "\n" + line
}

func unixTime(s string, fallback time.Time) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return fallback
	}
	return time.Unix(n, 0).UTC()
}

func onlyDigits(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return r
		}
		return -1
	}, s)
}
