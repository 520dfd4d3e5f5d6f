package domain

import (
	"encoding/json"
	"fmt"
)

// Content is a message's rich content beyond its text: what the API
// accepted, checked against the channel's rules, and what a provider
// adapter turns into its platform's payload. It is decoded once, at the API
// edge, and stored as JSON in the same shape (see Encode and DecodeContent),
// so no reader ever parses it by hand.
type Content struct {
	Media    *Media    `json:"media,omitempty"`
	Buttons  []Button  `json:"buttons,omitempty"`
	List     *List     `json:"list,omitempty"`     // WhatsApp
	Cards    []Card    `json:"cards,omitempty"`    // RCS carousel
	Template *Template `json:"template,omitempty"` // WhatsApp
	Fallback *Fallback `json:"fallback,omitempty"` // RCS: how it goes out as SMS
	// Quiet is the account's quiet hours when the send was accepted
	// ("21:00-08:00"), fixed like the fallback plan, so that a message put
	// back in the queue (a retry, a fallback) is not handed over inside
	// them either.
	Quiet string `json:"quiet,omitempty"`
	// SMPP is set on a message submitted over SMPP: the user that sent it
	// and whether it asked for a receipt.
	SMPP *SMPPOrigin `json:"smpp,omitempty"`
	// Twilio is set on a message created through the Twilio-compatible
	// API: its account SID and status callback.
	Twilio *TwilioOrigin `json:"twilio,omitempty"`
	// UDH is the user data header (hex, its length octet first) of an SMS
	// that is one part of a longer message its sender split itself: the
	// part goes out whole, with this header, as one segment.
	UDH string `json:"udh,omitempty"`
}

// Media is an attachment: a file uploaded to msgsvc (MediaID) or a public
// https address the platform fetches (URL); exactly one is set.
type Media struct {
	MediaID string `json:"mediaId,omitempty"`
	URL     string `json:"url,omitempty"`
}

// ButtonType says what a button does.
type ButtonType string

// The button types of the contract.
const (
	ReplyButton ButtonType = "reply" // sends Payload back as a reply
	URLButton   ButtonType = "url"   // opens URL
	CallButton  ButtonType = "call"  // dials Phone
)

// Button is a quick reply, link or call button (WhatsApp) or suggestion
// (RCS).
type Button struct {
	Type    ButtonType `json:"type"`
	Title   string     `json:"title"`
	Payload string     `json:"payload,omitempty"`
	URL     string     `json:"url,omitempty"`
	Phone   string     `json:"phone,omitempty"`
}

// List is a WhatsApp list message: a button that opens sections of rows.
type List struct {
	Button   string    `json:"button"`
	Sections []Section `json:"sections"`
}

// Section is one titled group of a List.
type Section struct {
	Title string `json:"title"`
	Rows  []Row  `json:"rows"`
}

// Row is one choice of a List; its ID comes back in the reply.
type Row struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

// Card is one rich card of an RCS carousel.
type Card struct {
	Title       string   `json:"title,omitempty"`
	Description string   `json:"description,omitempty"`
	Media       *Media   `json:"media,omitempty"`
	Buttons     []Button `json:"buttons,omitempty"`
}

// Template is an approved WhatsApp template with its parameters.
type Template struct {
	Name       string   `json:"name"`
	Language   string   `json:"language"`
	Parameters []string `json:"parameters"`
}

// Fallback is how an RCS message goes out as SMS when the device cannot
// take RCS. It is resolved and priced when the send is accepted, so that a
// later change of the account's settings or prices never changes what an
// accepted message costs.
type Fallback struct {
	Channel    Channel `json:"type"` // always SMS today
	Message    string  `json:"message"`
	Segments   int     `json:"segments"`
	Encoding   string  `json:"encoding"`
	SMSCredits int64   `json:"smsCredits"` // price as SMS, micro-credits
	RCSCredits int64   `json:"rcsCredits"` // price as RCS
}

// Empty reports whether there is no rich content at all (plain text).
func (c Content) Empty() bool {
	return c.Media == nil && len(c.Buttons) == 0 && c.List == nil && len(c.Cards) == 0 && c.Template == nil &&
		c.Fallback == nil && c.Quiet == "" && c.SMPP == nil && c.Twilio == nil && c.UDH == ""
}

// SMSFallback returns the message's fallback plan, if it has one.
func (c Content) SMSFallback() (Fallback, bool) {
	if c.Fallback == nil || c.Fallback.Channel != SMS {
		return Fallback{}, false
	}
	return *c.Fallback, true
}

// Encode gives the stored form: "" for plain text, else JSON.
func (c Content) Encode() string {
	if c.Empty() {
		return ""
	}
	b, err := json.Marshal(c)
	if err != nil {
		// Only strings, numbers and slices of them: cannot fail.
		panic(fmt.Sprintf("encode content: %v", err))
	}
	return string(b)
}

// DecodeContent reads the stored form back.
func DecodeContent(s string) (Content, error) {
	var c Content
	if s == "" {
		return c, nil
	}
	if err := json.Unmarshal([]byte(s), &c); err != nil {
		return Content{}, fmt.Errorf("decode content: %w", err)
	}
	return c, nil
}
