package message

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"reflect"
	"strings"

	"msgsvc/internal/channel/rcs"
	"msgsvc/internal/channel/whatsapp"
)

// MediaRef is an attachment: an uploaded file (MediaID) or a public https
// address (URL); exactly one is set.
type MediaRef struct {
	MediaID string `json:"mediaId,omitempty"`
	URL     string `json:"url,omitempty"`
}

// MediaChecker checks that media suits a channel: that an uploaded file
// exists in the account, and its type and size (CONTRACT section 2, Media).
// Check returns nil, a *FieldError to refuse the send (its Field relative to
// the media object: "mediaId", "url", or "" for the object itself), or any
// other error for a failure of its own (the send fails as INTERNAL).
type MediaChecker interface {
	Check(ctx context.Context, accountID, channel string, ref MediaRef) error
}

// Templates renders an account's approved WhatsApp templates. Render
// returns the text the recipient will read, a *FieldError to refuse the
// send (its Field relative to the template object: "name", "language",
// "parameters", "parameters[2]"), or any other error for a failure of its
// own.
type Templates interface {
	Render(ctx context.Context, accountID, name, language string, params []string) (string, error)
}

func (e *FieldError) Error() string { return strings.TrimSpace(e.Field + " " + e.Message) }

// Limits of media references.
const (
	MaxMediaID  = 128
	MaxMediaURL = 2048
)

// checked is what the content checks learnt about a request.
type checked struct {
	encoding string
	segments int
	body     string                     // the text sent; a rendered template on WhatsApp
	parts    map[string]json.RawMessage // rich content as stored, without the fallback plan
	template bool                       // WhatsApp template message
	fallback *fallbackWire              // RCS: the fallback asked for in the send
}

// content is the stored rich content with an optional fallback plan.
func (c checked) content(plan *fallbackPlan) string {
	if len(c.parts) == 0 && plan == nil {
		return ""
	}
	parts := make(map[string]any, len(c.parts)+1)
	for k, v := range c.parts {
		parts[k] = v
	}
	if plan != nil {
		parts["fallback"] = plan
	}
	b, _ := json.Marshal(parts) // raw JSON already parsed once and plain structs
	return string(b)
}

type listWire struct {
	Button   string            `json:"button"`
	Sections []json.RawMessage `json:"sections"`
}

type sectionWire struct {
	Title string            `json:"title"`
	Rows  []json.RawMessage `json:"rows"`
}

type cardWire struct {
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Media       json.RawMessage `json:"media"`
	Buttons     json.RawMessage `json:"buttons"`
}

type templateWire struct {
	Name       string          `json:"name"`
	Language   string          `json:"language"`
	Parameters json.RawMessage `json:"parameters"`
}

type fallbackWire struct {
	Type    string  `json:"type"`
	Message *string `json:"message"`
}

// buttonWire is the contract's button shape, shared by both channels.
type buttonWire struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Payload string `json:"payload"`
	URL     string `json:"url"`
	Phone   string `json:"phone"`
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

// decodeInto decodes one JSON value strictly into v, reporting a wrong type
// or an unknown field under path.
func decodeInto(verr *ValidationError, path string, raw json.RawMessage, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return true
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		verr.add(path+"."+te.Field, "must be a %s", jsonKind(te.Type))
	case errors.As(err, &te):
		verr.add(path, "must be a %s", jsonKind(te.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		verr.add(path+"."+name, "is not a known field")
	default:
		verr.add(path, "is not valid JSON")
	}
	return false
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Slice, reflect.Array:
		if t == reflect.TypeFor[json.RawMessage]() {
			return "JSON value"
		}
		return "array"
	case reflect.Struct, reflect.Map:
		return "object"
	case reflect.Bool:
		return "boolean"
	case reflect.Pointer:
		return jsonKind(t.Elem())
	}
	return "number"
}

// decodeArray splits a JSON array into its elements; a present non-array
// is reported. It returns nil, false when raw is absent or invalid.
func decodeArray(verr *ValidationError, path string, raw json.RawMessage) ([]json.RawMessage, bool) {
	if !present(raw) {
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		verr.add(path, "must be an array")
		return nil, false
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return items, true
}

func decodeButtons(verr *ValidationError, path string, raw json.RawMessage) ([]buttonWire, bool) {
	items, ok := decodeArray(verr, path, raw)
	if !ok {
		return nil, false
	}
	out := make([]buttonWire, 0, len(items))
	valid := true
	for i, it := range items {
		var b buttonWire
		if !decodeInto(verr, fmt.Sprintf("%s[%d]", path, i), it, &b) {
			valid = false
		}
		b.Type = strings.ToLower(strings.TrimSpace(b.Type))
		out = append(out, b)
	}
	return out, valid
}

// checkMedia checks a media reference's shape, then asks the MediaChecker
// (when there is one) whether the file suits the channel.
func (s *Service) checkMedia(ctx context.Context, verr *ValidationError, accountID, channel, path string, raw json.RawMessage) error {
	var ref MediaRef
	if !decodeInto(verr, path, raw, &ref) {
		return nil
	}
	switch {
	case ref.MediaID == "" && ref.URL == "":
		verr.add(path, "must give mediaId (from the media upload) or url")
		return nil
	case ref.MediaID != "" && ref.URL != "":
		verr.add(path, "must give either mediaId or url, not both")
		return nil
	case ref.MediaID != "" && len(ref.MediaID) > MaxMediaID:
		verr.add(path+".mediaId", "must be at most %d characters", MaxMediaID)
		return nil
	case ref.URL != "":
		if msg := mediaURLProblem(ref.URL); msg != "" {
			verr.add(path+".url", "%s", msg)
			return nil
		}
	}
	if s.media == nil {
		return nil
	}
	err := s.media.Check(ctx, accountID, channel, ref)
	var fe *FieldError
	switch {
	case err == nil:
	case errors.As(err, &fe):
		field := path
		if fe.Field != "" {
			field += "." + fe.Field
		}
		verr.add(field, "%s", fe.Message)
	default:
		return fmt.Errorf("check %s: %w", path, err)
	}
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

// refuseOn reports the rich fields that a channel does not have.
func refuseOn(verr *ValidationError, typ string, req SendRequest, fields ...string) {
	raw := map[string]json.RawMessage{"media": req.Media, "buttons": req.Buttons, "list": req.List, "cards": req.Cards,
		"template": req.Template, "fallback": req.Fallback}
	for _, f := range fields {
		if !present(raw[f]) {
			continue
		}
		where := map[string]string{"list": "WHATSAPP", "template": "WHATSAPP", "cards": "RCS", "fallback": "RCS"}[f]
		if where == "" {
			where = "WHATSAPP and RCS"
		}
		verr.add(f, "is not available on %s (only on %s)", typ, where)
	}
}

// checkWhatsApp decodes and checks the rich fields of a WhatsApp send.
func (s *Service) checkWhatsApp(ctx context.Context, verr *ValidationError, accountID string, req SendRequest, out *checked) error {
	refuseOn(verr, WhatsApp, req, "cards", "fallback")
	msg := whatsapp.Message{Text: req.Message, HasMedia: present(req.Media)}
	if bs, ok := decodeButtons(verr, "buttons", req.Buttons); ok {
		msg.Buttons = make([]whatsapp.Button, len(bs))
		for i, b := range bs {
			msg.Buttons[i] = whatsapp.Button(b)
		}
	}
	if present(req.List) {
		var lw listWire
		if decodeInto(verr, "list", req.List, &lw) {
			l := &whatsapp.List{Button: lw.Button, Sections: make([]whatsapp.Section, len(lw.Sections))}
			for i, raw := range lw.Sections {
				p := fmt.Sprintf("list.sections[%d]", i)
				var sw sectionWire
				if !decodeInto(verr, p, raw, &sw) {
					continue
				}
				sec := whatsapp.Section{Title: sw.Title, Rows: make([]whatsapp.Row, len(sw.Rows))}
				for j, rraw := range sw.Rows {
					decodeInto(verr, fmt.Sprintf("%s.rows[%d]", p, j), rraw, &sec.Rows[j])
				}
				l.Sections[i] = sec
			}
			msg.List = l
		}
	}
	var tpl *whatsapp.Template
	if present(req.Template) {
		var tw templateWire
		if decodeInto(verr, "template", req.Template, &tw) {
			tpl = &whatsapp.Template{Name: tw.Name, Language: tw.Language}
			if items, ok := decodeArray(verr, "template.parameters", tw.Parameters); ok {
				tpl.Parameters = make([]string, len(items))
				for i, it := range items {
					decodeInto(verr, fmt.Sprintf("template.parameters[%d]", i), it, &tpl.Parameters[i])
				}
			}
			msg.Template = tpl
		}
		out.template = true
	}
	for _, p := range whatsapp.Check(msg) {
		verr.add(p.Field, "%s", p.Message)
	}
	if present(req.Media) && tpl == nil {
		if err := s.checkMedia(ctx, verr, accountID, WhatsApp, "media", req.Media); err != nil {
			return err
		}
	}
	// A template is rendered only once its shape is right, so that the
	// renderer's answer is about the template, not about a typo.
	if tpl != nil && len(verr.Fields) == 0 && s.templates != nil {
		text, err := s.templates.Render(ctx, accountID, tpl.Name, tpl.Language, tpl.Parameters)
		var fe *FieldError
		switch {
		case err == nil:
			out.body = text
		case errors.As(err, &fe):
			field := "template"
			if fe.Field != "" {
				field += "." + fe.Field
			}
			verr.add(field, "%s", fe.Message)
		default:
			return fmt.Errorf("render template: %w", err)
		}
	}
	return nil
}

// checkRCS decodes and checks the rich fields of an RCS send.
func (s *Service) checkRCS(ctx context.Context, verr *ValidationError, accountID string, req SendRequest, out *checked) error {
	refuseOn(verr, RCS, req, "list", "template")
	msg := rcs.Message{Text: req.Message, HasMedia: present(req.Media)}
	if bs, ok := decodeButtons(verr, "buttons", req.Buttons); ok {
		msg.Buttons = make([]rcs.Button, len(bs))
		for i, b := range bs {
			msg.Buttons[i] = rcs.Button(b)
		}
	}
	type cardMedia struct {
		path string
		raw  json.RawMessage
	}
	var media []cardMedia
	if present(req.Media) {
		media = append(media, cardMedia{"media", req.Media})
	}
	if items, ok := decodeArray(verr, "cards", req.Cards); ok {
		msg.Cards = make([]rcs.Card, len(items))
		for i, raw := range items {
			p := fmt.Sprintf("cards[%d]", i)
			var cw cardWire
			if !decodeInto(verr, p, raw, &cw) {
				continue
			}
			card := rcs.Card{Title: cw.Title, Description: cw.Description, HasMedia: present(cw.Media)}
			if bs, ok := decodeButtons(verr, p+".buttons", cw.Buttons); ok {
				card.Buttons = make([]rcs.Button, len(bs))
				for j, b := range bs {
					card.Buttons[j] = rcs.Button(b)
				}
			}
			if card.HasMedia && i < rcs.MaxCards {
				media = append(media, cardMedia{p + ".media", cw.Media})
			}
			msg.Cards[i] = card
		}
	}
	for _, p := range rcs.Check(msg) {
		verr.add(p.Field, "%s", p.Message)
	}
	for _, m := range media {
		if err := s.checkMedia(ctx, verr, accountID, RCS, m.path, m.raw); err != nil {
			return err
		}
	}
	if present(req.Fallback) {
		var fw fallbackWire
		if decodeInto(verr, "fallback", req.Fallback, &fw) {
			fw.Type = strings.ToUpper(strings.TrimSpace(fw.Type))
			switch fw.Type {
			case SMS:
			case "":
				verr.add("fallback.type", "is required: SMS")
			default:
				verr.add("fallback.type", "must be SMS, the only fallback channel")
			}
			if fw.Message != nil && strings.TrimSpace(*fw.Message) == "" {
				verr.add("fallback.message", "must not be empty; leave it out to send the RCS message text")
			}
			out.fallback = &fw
		}
	}
	return nil
}

// richParts keeps the rich fields of a request, compacted, as the provider
// will need them; the fallback is stored as its resolved plan instead.
func richParts(req SendRequest) map[string]json.RawMessage {
	parts := map[string]json.RawMessage{}
	for k, v := range map[string]json.RawMessage{"media": req.Media, "buttons": req.Buttons, "list": req.List,
		"cards": req.Cards, "template": req.Template} {
		if !present(v) {
			continue
		}
		var b bytes.Buffer
		if err := json.Compact(&b, v); err == nil {
			parts[k] = b.Bytes()
		}
	}
	return parts
}
