package twilio

import (
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/twilio/sid"
	"github.com/msgsvc/msgsvc/internal/twilio/vocab"
)

// Resources as Twilio's document describes them. A field the document
// makes nullable is a pointer here when msgsvc can lack its value; an
// enum field is always one of the document's values.

type messageResource struct {
	AccountSid          string            `json:"account_sid"`
	APIVersion          string            `json:"api_version"`
	Body                string            `json:"body"`
	DateCreated         *string           `json:"date_created"`
	DateSent            *string           `json:"date_sent"`
	DateUpdated         *string           `json:"date_updated"`
	Direction           string            `json:"direction"`
	ErrorCode           *int              `json:"error_code"`
	ErrorMessage        *string           `json:"error_message"`
	From                *string           `json:"from"`
	MessagingServiceSid *string           `json:"messaging_service_sid"`
	NumMedia            string            `json:"num_media"`
	NumSegments         string            `json:"num_segments"`
	Price               *string           `json:"price"`
	PriceUnit           *string           `json:"price_unit"`
	Sid                 string            `json:"sid"`
	Status              string            `json:"status"`
	SubresourceURIs     map[string]string `json:"subresource_uris"`
	To                  string            `json:"to"`
	URI                 string            `json:"uri"`
}

func accountURI(accountSid string) string { return Base + "Accounts/" + accountSid }

func messageURI(accountSid, smSid string) string {
	return accountURI(accountSid) + "/Messages/" + smSid + ".json"
}

// ofMessage is a message as Twilio's Message resource. Its SID spells its
// native id; account_sid is the caller's, whatever credential created it.
func ofMessage(m domain.Message, accountSid, currency string, now time.Time) messageResource {
	smSid := sid.FromNative(sid.Message, m.ID)
	whatsapp := m.Channel == domain.WhatsApp || m.Type == domain.WhatsApp
	out := messageResource{
		AccountSid:  accountSid,
		APIVersion:  vocab.APIVersion,
		Body:        m.Body,
		DateCreated: date(m.CreatedAt),
		DateSent:    date(m.SentAt),
		DateUpdated: date(firstSet(m.UpdatedAt, m.CreatedAt)),
		Direction:   "outbound-api",
		NumMedia:    "0",
		NumSegments: strconv.Itoa(max(m.Segments, 1)),
		Sid:         smSid,
		Status:      vocab.Status(m, now),
		To:          address(m.To, whatsapp),
		URI:         messageURI(accountSid, smSid),
		SubresourceURIs: map[string]string{
			"media": accountURI(accountSid) + "/Messages/" + smSid + "/Media.json",
		},
	}
	if m.Content.Media != nil {
		out.NumMedia = "1"
	}
	if m.From != "" {
		f := address(m.From, whatsapp)
		out.From = &f
	}
	if code := vocab.ErrorCode(m, out.Status); code != 0 {
		out.ErrorCode = &code
		msg := m.ErrorMessage
		if msg == "" {
			msg = domain.ErrorText(m.ErrorCode)
		}
		out.ErrorMessage = &msg
	}
	if billed := m.Billed(); billed > 0 {
		p := "-" + decimal(billed)
		out.Price = &p
		if currency != "" {
			out.PriceUnit = &currency
		}
	}
	return out
}

// address writes a number as Twilio does: E.164 with its plus, and the
// channel's prefix for WhatsApp. A sender ID or a redacted number is
// written as it is.
func address(v string, whatsapp bool) string {
	if v == "" || strings.Trim(v, "0123456789") != "" {
		return v
	}
	if whatsapp {
		return "whatsapp:+" + v
	}
	return "+" + v
}

func date(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := vocab.Date(t)
	return &s
}

func firstSet(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// decimal writes micro-units as a decimal with at least two places.
func decimal(micro int64) string {
	neg := micro < 0
	if neg {
		micro = -micro
	}
	frac := strings.TrimRight(strconv.FormatInt(1_000_000+micro%1_000_000, 10)[1:], "0")
	for len(frac) < 2 {
		frac += "0"
	}
	s := strconv.FormatInt(micro/1_000_000, 10) + "." + frac
	if neg {
		s = "-" + s
	}
	return s
}

type page struct {
	FirstPageURI    string  `json:"first_page_uri"`
	End             int     `json:"end"`
	NextPageURI     *string `json:"next_page_uri"`
	Page            int     `json:"page"`
	PageSize        int     `json:"page_size"`
	PreviousPageURI *string `json:"previous_page_uri"`
	Start           int     `json:"start"`
	URI             string  `json:"uri"`
}

type messagePage struct {
	Messages []messageResource `json:"messages"`
	page
}

type numberPage struct {
	IncomingPhoneNumbers []numberResource `json:"incoming_phone_numbers"`
	page
}

type accountResource struct {
	AuthToken       *string           `json:"auth_token"`
	DateCreated     *string           `json:"date_created"`
	DateUpdated     *string           `json:"date_updated"`
	FriendlyName    string            `json:"friendly_name"`
	OwnerAccountSid string            `json:"owner_account_sid"`
	Sid             string            `json:"sid"`
	Status          string            `json:"status"`
	SubresourceURIs map[string]string `json:"subresource_uris"`
	Type            string            `json:"type"`
	URI             string            `json:"uri"`
}

type balanceResource struct {
	AccountSid string `json:"account_sid"`
	Balance    string `json:"balance"`
	Currency   string `json:"currency"`
}

type capabilities struct {
	Voice bool `json:"voice"`
	SMS   bool `json:"sms"`
	MMS   bool `json:"mms"`
	Fax   bool `json:"fax"`
}

type numberResource struct {
	AccountSid           string       `json:"account_sid"`
	APIVersion           string       `json:"api_version"`
	Capabilities         capabilities `json:"capabilities"`
	DateCreated          *string      `json:"date_created"`
	DateUpdated          *string      `json:"date_updated"`
	FriendlyName         string       `json:"friendly_name"`
	PhoneNumber          string       `json:"phone_number"`
	Sid                  string       `json:"sid"`
	SmsApplicationSid    *string      `json:"sms_application_sid"`
	SmsFallbackMethod    *string      `json:"sms_fallback_method"`
	SmsFallbackURL       *string      `json:"sms_fallback_url"`
	SmsMethod            string       `json:"sms_method"`
	SmsURL               *string      `json:"sms_url"`
	StatusCallback       *string      `json:"status_callback"`
	StatusCallbackMethod *string      `json:"status_callback_method"`
	VoiceMethod          *string      `json:"voice_method"`
	VoiceURL             *string      `json:"voice_url"`
	Status               string       `json:"status"`
	URI                  string       `json:"uri"`
}
