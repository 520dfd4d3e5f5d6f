package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// sendWire is the body of POST /messages as integrators write it. Rich
// fields stay raw so that each is decoded on its own and a problem is
// named by its path (buttons[1].title), all problems of a request at once.
type sendWire struct {
	To          string          `json:"to"`
	Recipients  []string        `json:"recipients"`
	Message     string          `json:"message"`
	From        string          `json:"from"`
	Type        string          `json:"type"`
	CallbackURL string          `json:"callbackUrl"`
	Media       json.RawMessage `json:"media"`
	Buttons     json.RawMessage `json:"buttons"`
	List        json.RawMessage `json:"list"`
	Cards       json.RawMessage `json:"cards"`
	Template    json.RawMessage `json:"template"`
	Fallback    json.RawMessage `json:"fallback"`
	ScheduledAt string          `json:"scheduledAt"`
	Validity    *int            `json:"validity"`
	Reference   string          `json:"reference"`
}

type listWire struct {
	Button   string            `json:"button"`
	Sections []json.RawMessage `json:"sections"`
}

type sectionWire struct {
	Title string            `json:"title"`
	Rows  []json.RawMessage `json:"rows"`
}

type rowWire struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description"`
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

type mediaWire struct {
	MediaID string `json:"mediaId"`
	URL     string `json:"url"`
}

// buttonWire is the contract's button shape, shared by both channels.
type buttonWire struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Payload string `json:"payload"`
	URL     string `json:"url"`
	Phone   string `json:"phone"`
}

// request reads a decoded body into the core's typed send request: the
// channel and the schedule parsed, the validity a duration, the rich
// content in its typed shape. What cannot be read (a rich field present
// but malformed, a type or a time that does not parse, to and recipients
// both given) is left out and named in the request's problems, by its
// name here and its domain path.
func (w sendWire) request() domain.SendRequest {
	r := domain.SendRequest{Recipients: w.Recipients, Text: w.Message, Sender: w.From, CallbackURL: w.CallbackURL,
		Reference: w.Reference, Origin: domain.Origin{Front: domain.FrontREST}}
	dec := &richDecoder{}
	switch {
	case w.To != "" && w.Recipients != nil:
		// The numbers of recipients are still checked, each named "to".
		dec.problem("to", "recipients", domain.FieldConflict, "give either to or recipients, not both")
	case w.To != "":
		r.Recipients = []string{w.To}
	}
	if w.Type != "" {
		c, err := domain.ParseChannel(w.Type)
		if err != nil {
			dec.problem("type", "channel", domain.FieldInvalid, "must be SMS, WHATSAPP or RCS")
		}
		r.Channel = c
	}
	r.Content.Media = dec.media("media", w.Media)
	r.Content.Buttons = dec.buttons("buttons", w.Buttons)
	r.Content.List = dec.list(w.List)
	r.Content.Cards = dec.cards(w.Cards)
	r.Content.Template = dec.template(w.Template)
	if present(w.Fallback) {
		var fw fallbackWire
		if dec.into("fallback", w.Fallback, &fw) {
			// Any channel but SMS is refused by the core, named or not.
			r.Fallback = &domain.FallbackRequest{Channel: domain.Channel(strings.ToUpper(strings.TrimSpace(fw.Type))), Text: fw.Message}
		}
	}
	if w.ScheduledAt != "" {
		t, err := time.Parse(time.RFC3339Nano, w.ScheduledAt)
		if err != nil {
			dec.problem("scheduledAt", "schedule", domain.FieldMalformed, "must be an RFC 3339 time, e.g. 2026-11-21T10:00:00Z")
		}
		r.Schedule = t
	}
	if w.Validity != nil {
		v := seconds(*w.Validity)
		r.Validity = &v
	}
	r.Problems = dec.problems
	return r
}

// seconds is n seconds, held to what a time.Duration can hold (the core
// refuses any validity that large).
func seconds(n int) time.Duration {
	const most = int(math.MaxInt64 / int64(time.Second))
	return time.Duration(min(max(n, -most), most)) * time.Second
}

// richDecoder decodes rich fields strictly, collecting what is wrong.
type richDecoder struct{ problems []domain.FieldError }

// problem records what is wrong with a field of the request, by its name
// here and its domain path.
func (d *richDecoder) problem(field, path, code, msg string) {
	d.problems = append(d.problems, domain.FieldError{Field: field, Path: path, Code: code, Message: msg})
}

// add records a problem of a rich field, named by its path in the body.
func (d *richDecoder) add(field, code, format string, args ...any) {
	d.problem(field, richPath(field), code, fmt.Sprintf(format, args...))
}

func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

// into decodes one JSON value strictly into v, reporting a wrong type or
// an unknown field under path.
func (d *richDecoder) into(path string, raw json.RawMessage, v any) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		return true
	}
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &te) && te.Field != "":
		d.add(path+"."+te.Field, domain.FieldWrongType, "must be a %s", kindOf(te.Type))
	case errors.As(err, &te):
		d.add(path, domain.FieldWrongType, "must be a %s", kindOf(te.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		d.add(path+"."+name, domain.FieldUnknown, "is not a known field")
	default:
		d.add(path, domain.FieldMalformed, "is not valid JSON")
	}
	return false
}

func kindOf(t reflect.Type) string {
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
		return kindOf(t.Elem())
	}
	return "number"
}

// array splits a JSON array into its elements; it returns nil, false when
// raw is absent or not an array (reported).
func (d *richDecoder) array(path string, raw json.RawMessage) ([]json.RawMessage, bool) {
	if !present(raw) {
		return nil, false
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		d.add(path, domain.FieldWrongType, "must be an array")
		return nil, false
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return items, true
}

func (d *richDecoder) media(path string, raw json.RawMessage) *domain.Media {
	if !present(raw) {
		return nil
	}
	var mw mediaWire
	if !d.into(path, raw, &mw) {
		return nil
	}
	return &domain.Media{MediaID: mw.MediaID, URL: mw.URL}
}

func (d *richDecoder) buttons(path string, raw json.RawMessage) []domain.Button {
	items, ok := d.array(path, raw)
	if !ok {
		return nil
	}
	out := make([]domain.Button, 0, len(items))
	for i, it := range items {
		var b buttonWire
		d.into(fmt.Sprintf("%s[%d]", path, i), it, &b)
		out = append(out, domain.Button{Type: domain.ButtonType(strings.ToLower(strings.TrimSpace(b.Type))),
			Title: b.Title, Payload: b.Payload, URL: b.URL, Phone: b.Phone})
	}
	return out
}

func (d *richDecoder) list(raw json.RawMessage) *domain.List {
	if !present(raw) {
		return nil
	}
	var lw listWire
	if !d.into("list", raw, &lw) {
		return nil
	}
	l := &domain.List{Button: lw.Button, Sections: make([]domain.Section, len(lw.Sections))}
	for i, sraw := range lw.Sections {
		p := fmt.Sprintf("list.sections[%d]", i)
		var sw sectionWire
		if !d.into(p, sraw, &sw) {
			continue
		}
		sec := domain.Section{Title: sw.Title, Rows: make([]domain.Row, len(sw.Rows))}
		for j, rraw := range sw.Rows {
			var rw rowWire
			d.into(fmt.Sprintf("%s.rows[%d]", p, j), rraw, &rw)
			sec.Rows[j] = domain.Row(rw)
		}
		l.Sections[i] = sec
	}
	return l
}

func (d *richDecoder) cards(raw json.RawMessage) []domain.Card {
	items, ok := d.array("cards", raw)
	if !ok {
		return nil
	}
	out := make([]domain.Card, len(items))
	for i, craw := range items {
		p := fmt.Sprintf("cards[%d]", i)
		var cw cardWire
		if !d.into(p, craw, &cw) {
			continue
		}
		out[i] = domain.Card{Title: cw.Title, Description: cw.Description, Media: d.media(p+".media", cw.Media),
			Buttons: d.buttons(p+".buttons", cw.Buttons)}
	}
	return out
}

func (d *richDecoder) template(raw json.RawMessage) *domain.Template {
	if !present(raw) {
		return nil
	}
	var tw templateWire
	if !d.into("template", raw, &tw) {
		return &domain.Template{} // asked for: the send is a template send, and refused for this problem
	}
	t := &domain.Template{Name: tw.Name, Language: tw.Language}
	if items, ok := d.array("template.parameters", tw.Parameters); ok {
		t.Parameters = make([]string, len(items))
		for i, it := range items {
			d.into(fmt.Sprintf("template.parameters[%d]", i), it, &t.Parameters[i])
		}
	}
	return t
}
