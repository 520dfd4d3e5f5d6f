package rbm

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/phone"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// notification is what one webhook call carries, decoded from the Pub/Sub
// message's data: a UserEvent (delivered, read, typing), a UserMessage
// (text, a suggestion tapped, a location, a file) or a ServerEvent (a
// message expired and was taken back).
type notification struct {
	SenderPhoneNumber string              `json:"senderPhoneNumber"` // user events and messages
	PhoneNumber       string              `json:"phoneNumber"`       // server events
	AgentID           string              `json:"agentId"`
	MessageID         string              `json:"messageId"`
	EventType         string              `json:"eventType"`
	EventID           string              `json:"eventId"`
	SendTime          string              `json:"sendTime"`
	Text              *string             `json:"text"`
	SuggestionResp    *suggestionResponse `json:"suggestionResponse"`
	Location          *latLng             `json:"location"`
	UserFile          *userFile           `json:"userFile"`
}

type suggestionResponse struct {
	PostbackData string `json:"postbackData"`
	Text         string `json:"text"`
	Type         string `json:"type"` // REPLY or ACTION
}

type latLng struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

type userFile struct {
	Payload struct {
		MimeType      string `json:"mimeType"`
		FileSizeBytes int64  `json:"fileSizeBytes"`
		FileURI       string `json:"fileUri"`
		FileName      string `json:"fileName"`
	} `json:"payload"`
}

// parsed is what a notification means to us: status reports, or one
// inbound message, or nothing (typing indicators, a tap on a link, event
// types we do not know).
type parsed struct {
	statuses []provider.Status
	inbound  *provider.Inbound
	ignored  string // why nothing came of it
}

// errMalformed is a notification we cannot read.
var errMalformed = errors.New("malformed notification")

// parseNotification reads the decoded data of a Pub/Sub message. Statuses
// name the platform's message id (Ref), which is the id we gave it.
func parseNotification(data []byte) (parsed, error) {
	var n notification
	if err := json.Unmarshal(data, &n); err != nil {
		return parsed{}, fmt.Errorf("%w: %v", errMalformed, err)
	}
	at, err := sendTime(n.SendTime)
	if err != nil {
		return parsed{}, err
	}
	switch {
	case n.EventType != "" && n.SenderPhoneNumber != "":
		return userEvent(n, at)
	case n.EventType != "":
		return serverEvent(n, at)
	case n.SenderPhoneNumber != "":
		return userMessage(n, at)
	}
	return parsed{}, fmt.Errorf("%w: neither an event nor a message", errMalformed)
}

func userEvent(n notification, at time.Time) (parsed, error) {
	var st domain.Status
	switch n.EventType {
	case "DELIVERED":
		st = domain.Delivered
	case "READ":
		st = domain.Read
	default: // IS_TYPING and whatever comes next
		return parsed{ignored: "user event " + n.EventType}, nil
	}
	if n.MessageID == "" {
		return parsed{}, fmt.Errorf("%w: %s event without messageId", errMalformed, n.EventType)
	}
	return parsed{statuses: []provider.Status{{Ref: n.MessageID, Status: st, At: at}}}, nil
}

func serverEvent(n notification, at time.Time) (parsed, error) {
	switch n.EventType {
	case "TTL_EXPIRATION_REVOKED":
		if n.MessageID == "" {
			return parsed{}, fmt.Errorf("%w: %s without messageId", errMalformed, n.EventType)
		}
		return parsed{statuses: []provider.Status{{Ref: n.MessageID, Status: domain.Failed, ErrorCode: domain.CodeExpired,
			ErrorMessage: "not delivered before its validity ended; the platform took it back", At: at}}}, nil
	case "TTL_EXPIRATION_REVOKE_FAILED":
		// Too late to take back: it was being delivered, and its
		// DELIVERED event follows.
		return parsed{ignored: "server event " + n.EventType}, nil
	}
	return parsed{ignored: "server event " + n.EventType}, nil
}

// userMessage turns what a user sent into the text of a reply: text as
// is; a suggested reply as its postback (the payload the integrator gave
// the button); a location and a file as a readable line. A tap on a link
// or dial action is not a message.
func userMessage(n notification, at time.Time) (parsed, error) {
	var body string
	switch {
	case n.Text != nil:
		body = *n.Text
	case n.SuggestionResp != nil && n.SuggestionResp.Type == "ACTION":
		return parsed{ignored: "suggested action tapped"}, nil
	case n.SuggestionResp != nil:
		body = cmp.Or(n.SuggestionResp.PostbackData, n.SuggestionResp.Text)
	case n.Location != nil:
		body = "Location: " + strconv.FormatFloat(n.Location.Latitude, 'f', -1, 64) + "," +
			strconv.FormatFloat(n.Location.Longitude, 'f', -1, 64)
	case n.UserFile != nil:
		p := n.UserFile.Payload
		body = fmt.Sprintf("File: %s (%s, %d bytes) %s", cmp.Or(p.FileName, "unnamed"), cmp.Or(p.MimeType, "unknown type"),
			p.FileSizeBytes, p.FileURI)
	default:
		return parsed{ignored: "user message without content"}, nil
	}
	from := phone.Address(n.SenderPhoneNumber)
	if !digits(from) {
		return parsed{}, fmt.Errorf("%w: senderPhoneNumber is not an E.164 number", errMalformed)
	}
	in := &provider.Inbound{From: from, To: n.AgentID, Channel: domain.RCS, Body: body, At: at}
	if n.MessageID != "" {
		// The user's client names its messages; the platform may deliver
		// one again, and only sender and id together identify it.
		in.Ref = "+" + from + "/" + n.MessageID
	}
	return parsed{inbound: in}, nil
}

// sendTime reads an RFC 3339 timestamp; none is the zero time (the sink
// uses the time of arrival).
func sendTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: sendTime %q", errMalformed, truncate(s, 40))
	}
	return t.UTC(), nil
}

func digits(s string) bool {
	if len(s) < 1 || len(s) > 15 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
