package intake

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/msgsvc/msgsvc/internal/channel/field"
	"github.com/msgsvc/msgsvc/internal/channel/rcs"
	"github.com/msgsvc/msgsvc/internal/channel/sms"
	"github.com/msgsvc/msgsvc/internal/channel/whatsapp"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// MediaChecker checks that media suits a channel: that an uploaded file
// exists in the account, and its type and size (each channel's limits).
// Check returns nil, a *FieldError to refuse the send (its Field relative to
// the media object: "mediaId", "url", or "" for the object itself), or any
// other error for a failure of its own (the send fails as INTERNAL).
type MediaChecker interface {
	Check(ctx context.Context, accountID string, channel domain.Channel, ref domain.Media) error
}

// Templates renders an account's approved WhatsApp templates. Render
// returns the text the recipient will read, a *FieldError to refuse the
// send (its Field relative to the template object: "name", "language",
// "parameters", "parameters[2]"), or any other error for a failure of its
// own.
type Templates interface {
	Render(ctx context.Context, accountID, name, language string, params []string) (string, error)
}

// Limits of media references.
const (
	MaxMediaID  = 128
	MaxMediaURL = 2048
)

// checked is what the content rules learnt about a request.
type checked struct {
	encoding string
	segments int
	body     string         // the text sent; a rendered template on WhatsApp
	content  domain.Content // rich content as stored, without the fallback plan
	template bool           // WhatsApp template message
}

// Paths of the text and of the rich content.
const (
	pathText    = "text"
	contentPath = "content."
)

// channelPath is the domain path of a field a channel's rules name
// (internal/channel/field): the text, or a part of the rich content.
func channelPath(field string) string {
	if field == "message" || strings.HasPrefix(field, "message.") {
		return pathText + strings.TrimPrefix(field, "message")
	}
	return contentPath + field
}

// checkContent applies the channel's rules to the text and rich content.
// Field problems go to verr; an error is a failure of a checker.
func (s *Service) checkContent(ctx context.Context, verr *domain.ValidationError, who domain.Principal, r domain.SendRequest) (checked, error) {
	out := checked{body: r.Text, encoding: "UTF-8", segments: 1}
	switch {
	case r.Text == "" && r.Content.Template == nil:
		verr.AddAt(pathText, domain.FieldRequired, "is required")
	case r.Text != "" && strings.TrimSpace(r.Text) == "":
		verr.AddAt(pathText, domain.FieldInvalid, "must not be only whitespace")
	}
	switch typ := r.Channel; typ {
	case domain.SMS:
		refuseOn(verr, typ, r, "media", "buttons", "list", "cards", "template", "fallback")
		if r.Text != "" {
			out.encoding, out.segments = checkSMS(verr, r.Text)
		}
		out.content.SMPP = r.Origin.SMPP
		out.content.Twilio = r.Origin.Twilio
		if r.UDH != nil {
			checkUDHPart(verr, r.UDH, r.Text)
			out.content.UDH = udhHex(r.UDH)
			out.segments = 1 // a part its sender cut, charged as the one segment it must fit
		}
		return out, nil
	case domain.WhatsApp:
		out.content = r.Content
		out.content.Twilio = r.Origin.Twilio
		return out, s.checkWhatsApp(ctx, verr, who.Account.ID, r, &out)
	case domain.RCS:
		out.content = r.Content
		return out, s.checkRCS(ctx, verr, who.Account.ID, r)
	}
	return out, nil
}

// checkSMS counts the segments of an SMS text.
func checkSMS(verr *domain.ValidationError, text string) (string, int) {
	a := sms.Analyze(text)
	if a.Segments > sms.MaxSegments {
		msg := fmt.Sprintf("is %d segments long; at most %d are allowed (%s, %d per segment when split)",
			a.Segments, sms.MaxSegments, a.Encoding, perPart(string(a.Encoding)))
		if a.Encoding == sms.UCS2 {
			msg += "; these characters need UCS-2: " + strings.Join(a.NonGSM[:min(len(a.NonGSM), 10)], " ")
		}
		verr.AddAt(pathText, domain.FieldRange, "%s", msg)
	}
	return string(a.Encoding), a.Segments
}

// checkUDHPart refuses a part its sender cut (a user data header and its
// text) that does not fit one SMS on the air: it is charged one segment, and
// a longer one would reach the carrier as several, or whole at its price.
func checkUDHPart(verr *domain.ValidationError, udh []byte, text string) {
	if len(udh) == 0 || int(udh[0])+1 != len(udh) {
		verr.AddAt("udh", domain.FieldInvalid, "is not a user data header (hex, its length octet first)")
		return
	}
	if n := sms.PartOctets(text, len(udh)); n > sms.MaxUserData {
		verr.AddAt("udh", domain.FieldRange, "makes a part of %d octets with its text; a part with a user data header must fit one segment, %d octets with the header",
			n, sms.MaxUserData)
	}
}

// given reports which rich fields a request carries.
func given(r domain.SendRequest, field string) bool {
	c := r.Content
	switch field {
	case "media":
		return c.Media != nil
	case "buttons":
		return c.Buttons != nil
	case "list":
		return c.List != nil
	case "cards":
		return c.Cards != nil
	case "template":
		return c.Template != nil
	case "fallback":
		return r.Fallback != nil
	}
	return false
}

// refuseOn reports the rich fields that a channel does not have.
func refuseOn(verr *domain.ValidationError, typ domain.Channel, r domain.SendRequest, fields ...string) {
	for _, f := range fields {
		if !given(r, f) {
			continue
		}
		path := contentPath + f
		if f == "fallback" {
			path = f
		}
		if typ == domain.SMS {
			verr.AddAt(path, domain.FieldUnavailable, "is not available on SMS")
			continue
		}
		where := map[string]string{"list": "WHATSAPP", "template": "WHATSAPP", "cards": "RCS", "fallback": "RCS"}[f]
		if where == "" {
			where = "WHATSAPP and RCS"
		}
		verr.AddAt(path, domain.FieldUnavailable, "is not available on %s (only on %s)", typ, where)
	}
}

// checkWhatsApp checks the rich content of a WhatsApp send and renders its
// template.
func (s *Service) checkWhatsApp(ctx context.Context, verr *domain.ValidationError, accountID string, r domain.SendRequest, out *checked) error {
	refuseOn(verr, domain.WhatsApp, r, "cards", "fallback")
	c := r.Content
	msg := whatsapp.Message{Text: r.Text, HasMedia: c.Media != nil, Buttons: buttons(c.Buttons)}
	if c.List != nil {
		l := &whatsapp.List{Button: c.List.Button, Sections: make([]whatsapp.Section, len(c.List.Sections))}
		for i, sec := range c.List.Sections {
			l.Sections[i] = whatsapp.Section{Title: sec.Title, Rows: make([]whatsapp.Row, len(sec.Rows))}
			for j, r := range sec.Rows {
				l.Sections[i].Rows[j] = whatsapp.Row{ID: r.ID, Title: r.Title, Description: r.Description}
			}
		}
		msg.List = l
	}
	tpl := c.Template
	if tpl != nil {
		msg.Template = &whatsapp.Template{Name: tpl.Name, Language: tpl.Language, Parameters: tpl.Parameters}
		out.template = true
	}
	for _, p := range whatsapp.Check(msg) {
		verr.AddAt(channelPath(p.Field), domain.FieldInvalid, "%s", p.Message)
	}
	if c.Media != nil && tpl == nil {
		if err := s.checkMedia(ctx, verr, accountID, domain.WhatsApp, contentPath+"media", *c.Media); err != nil {
			return err
		}
	}
	// A template is rendered only once its shape is right, so that the
	// renderer's answer is about the template, not about a typo.
	if tpl == nil || len(verr.Fields) > 0 || s.templates == nil {
		return nil
	}
	text, err := s.templates.Render(ctx, accountID, tpl.Name, tpl.Language, tpl.Parameters)
	if err != nil {
		return fieldOrFailure(verr, contentPath+"template", "render template", err)
	}
	out.body = text
	return nil
}

// buttons are a send's buttons as the channels' rules read them
// (whatsapp.Button and rcs.Button are both field.Button).
func buttons(bs []domain.Button) []field.Button {
	if bs == nil {
		return nil
	}
	out := make([]field.Button, len(bs))
	for i, b := range bs {
		out[i] = field.Button{Type: string(b.Type), Title: b.Title, Payload: b.Payload, URL: b.URL, Phone: b.Phone}
	}
	return out
}

// checkRCS checks the rich content of an RCS send.
func (s *Service) checkRCS(ctx context.Context, verr *domain.ValidationError, accountID string, r domain.SendRequest) error {
	refuseOn(verr, domain.RCS, r, "list", "template")
	c := r.Content
	msg := rcs.Message{Text: r.Text, HasMedia: c.Media != nil, Buttons: buttons(c.Buttons)}
	type ref struct {
		path string
		m    domain.Media
	}
	var media []ref
	if c.Media != nil {
		media = append(media, ref{contentPath + "media", *c.Media})
	}
	if c.Cards != nil {
		msg.Cards = make([]rcs.Card, len(c.Cards))
		for i, card := range c.Cards {
			msg.Cards[i] = rcs.Card{Title: card.Title, Description: card.Description, HasMedia: card.Media != nil,
				Buttons: buttons(card.Buttons)}
			if card.Media != nil && i < rcs.MaxCards {
				media = append(media, ref{fmt.Sprintf(contentPath+"cards[%d].media", i), *card.Media})
			}
		}
	}
	for _, p := range rcs.Check(msg) {
		verr.AddAt(channelPath(p.Field), domain.FieldInvalid, "%s", p.Message)
	}
	for _, m := range media {
		if err := s.checkMedia(ctx, verr, accountID, domain.RCS, m.path, m.m); err != nil {
			return err
		}
	}
	if fb := r.Fallback; fb != nil {
		switch fb.Channel {
		case domain.SMS:
		case "":
			verr.AddAt("fallback.channel", domain.FieldRequired, "is required: SMS")
		default:
			verr.AddAt("fallback.channel", domain.FieldInvalid, "must be SMS, the only fallback channel")
		}
		if fb.Text != nil && strings.TrimSpace(*fb.Text) == "" {
			verr.AddAt("fallback.text", domain.FieldInvalid, "must not be empty; leave it out to send the RCS message text")
		}
	}
	return nil
}

// checkMedia checks a media reference's shape, then asks the MediaChecker
// (when there is one) whether the file suits the channel.
func (s *Service) checkMedia(ctx context.Context, verr *domain.ValidationError, accountID string, channel domain.Channel, path string, ref domain.Media) error {
	switch {
	case ref.MediaID == "" && ref.URL == "":
		verr.AddAt(path, domain.FieldRequired, "must give mediaId (from the media upload) or url")
		return nil
	case ref.MediaID != "" && ref.URL != "":
		verr.AddAt(path, domain.FieldConflict, "must give either mediaId or url, not both")
		return nil
	case ref.MediaID != "" && len(ref.MediaID) > MaxMediaID:
		verr.AddAt(path+".mediaId", domain.FieldRange, "must be at most %d characters", MaxMediaID)
		return nil
	case ref.URL != "":
		if msg := mediaURLProblem(ref.URL); msg != "" {
			verr.AddAt(path+".url", domain.FieldInvalid, "%s", msg)
			return nil
		}
	}
	if s.media == nil {
		return nil
	}
	if err := s.media.Check(ctx, accountID, channel, ref); err != nil {
		return fieldOrFailure(verr, path, "check "+path, err)
	}
	return nil
}

// fieldOrFailure reports a checker's *FieldError under path, or returns
// any other error as the checker's own failure.
func fieldOrFailure(verr *domain.ValidationError, path, what string, err error) error {
	var fe *domain.FieldError
	if !errors.As(err, &fe) {
		return fmt.Errorf("%s: %w", what, err)
	}
	field := path
	if fe.Field != "" {
		field += "." + fe.Field
	}
	verr.AddAt(field, cmp.Or(fe.Code, domain.FieldInvalid), "%s", fe.Message)
	return nil
}

// mediaURLProblem: the channel's platform fetches the file, so only a
// public https address works.
func mediaURLProblem(v string) string {
	if len(v) > MaxMediaURL {
		return fmt.Sprintf("must be at most %d characters", MaxMediaURL)
	}
	u, err := url.Parse(v)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return "must be an absolute https URL"
	}
	return ""
}

// fallbackText is the SMS an RCS message falls back to.
type fallbackText struct {
	analysis sms.Analysis
	body     string
}

// resolveFallback decides the SMS text of an RCS send's fallback: the
// fallback's own message, else the RCS text. It returns nil when the send
// has no fallback (neither asked for nor the account's default).
func resolveFallback(verr *domain.ValidationError, account domain.Account, r domain.SendRequest) *fallbackText {
	if r.Fallback == nil && !account.RCSFallback {
		return nil
	}
	text, path := r.Text, pathText
	if r.Fallback != nil && r.Fallback.Text != nil {
		text, path = *r.Fallback.Text, "fallback.text"
	}
	a := sms.Analyze(text)
	if a.Segments > sms.MaxSegments {
		hint := ""
		if path == pathText {
			hint = "; give a shorter fallback.message for the SMS"
		}
		verr.AddAt(path, domain.FieldRange, "is %d SMS segments long (%s), too long for the SMS fallback of at most %d%s",
			a.Segments, a.Encoding, sms.MaxSegments, hint)
	}
	return &fallbackText{analysis: a, body: text}
}
