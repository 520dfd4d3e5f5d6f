package whatsapp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// The platform's request body (POST /{phone-number-id}/messages), only
// the parts msgsvc sends.
type outMessage struct {
	MessagingProduct string       `json:"messaging_product"`
	RecipientType    string       `json:"recipient_type"`
	To               string       `json:"to"`
	Type             string       `json:"type"`
	Text             *outText     `json:"text,omitempty"`
	Image            *mediaObject `json:"image,omitempty"`
	Video            *mediaObject `json:"video,omitempty"`
	Document         *mediaObject `json:"document,omitempty"`
	Interactive      *interactive `json:"interactive,omitempty"`
	Template         *outTemplate `json:"template,omitempty"`
}

type outText struct {
	Body       string `json:"body"`
	PreviewURL bool   `json:"preview_url,omitempty"`
}

// mediaObject names a file by the platform's id (an upload) or by link.
type mediaObject struct {
	ID      string `json:"id,omitempty"`
	Link    string `json:"link,omitempty"`
	Caption string `json:"caption,omitempty"`
}

type interactive struct {
	Type   string         `json:"type"`
	Header *header        `json:"header,omitempty"`
	Body   *outTextObject `json:"body,omitempty"`
	Action action         `json:"action"`
}

type outTextObject struct {
	Text string `json:"text"`
}

type header struct {
	Type     string       `json:"type"`
	Image    *mediaObject `json:"image,omitempty"`
	Video    *mediaObject `json:"video,omitempty"`
	Document *mediaObject `json:"document,omitempty"`
}

type action struct {
	Buttons    []replyButton `json:"buttons,omitempty"`
	Button     string        `json:"button,omitempty"`
	Sections   []section     `json:"sections,omitempty"`
	Name       string        `json:"name,omitempty"`
	Parameters *ctaURL       `json:"parameters,omitempty"`
}

type replyButton struct {
	Type  string `json:"type"`
	Reply struct {
		ID    string `json:"id"`
		Title string `json:"title"`
	} `json:"reply"`
}

type section struct {
	Title string `json:"title,omitempty"`
	Rows  []row  `json:"rows"`
}

type row struct {
	ID          string `json:"id"`
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
}

type ctaURL struct {
	DisplayText string `json:"display_text"`
	URL         string `json:"url"`
}

type outTemplate struct {
	Name       string `json:"name"`
	Language   lang   `json:"language"`
	Components []comp `json:"components,omitempty"`
}

type lang struct {
	Policy string `json:"policy"`
	Code   string `json:"code"`
}

type comp struct {
	Type       string  `json:"type"`
	Parameters []param `json:"parameters"`
}

type param struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// payload builds the platform's JSON for m. Media by mediaId is uploaded
// first (or found in the cache); that is the only step that can fail.
func (c *Client) payload(ctx context.Context, m provider.Outbound) ([]byte, *failure) {
	msg := outMessage{MessagingProduct: "whatsapp", RecipientType: "individual", To: m.To}
	ct := m.Content
	var media *mediaObject
	mediaKind := ""
	if ct.Media != nil && ct.Template == nil {
		var f *failure
		if mediaKind, media, f = c.mediaObject(ctx, m.AccountID, *ct.Media); f != nil {
			return nil, f
		}
	}
	switch {
	case ct.Template != nil:
		msg.Type, msg.Template = "template", template(*ct.Template)
	case ct.List != nil:
		msg.Type, msg.Interactive = "interactive", list(m.Body, *ct.List)
	case len(ct.Buttons) > 0 && (ct.Buttons[0].Type == domain.CallButton || ct.Buttons[0].Type == domain.URLButton && !c.cfg.CTAURLButtons):
		// The platform has no button that dials a number in a free-form
		// message (only templates define one), and its document has none
		// that opens an address (see Config.CTAURLButtons): the number or
		// address goes in the text, where WhatsApp makes it tappable.
		text := strings.TrimSpace(m.Body + "\n\n" + buttonText(ct.Buttons[0]))
		if media != nil {
			media.Caption = text
			msg.setMedia(mediaKind, media)
		} else {
			msg.Type, msg.Text = "text", &outText{Body: text, PreviewURL: ct.Buttons[0].Type == domain.URLButton}
		}
	case len(ct.Buttons) > 0:
		msg.Type, msg.Interactive = "interactive", buttons(m.Body, ct.Buttons)
		if media != nil {
			msg.Interactive.Header = &header{Type: mediaKind}
			msg.Interactive.Header.set(mediaKind, media)
		}
	case media != nil:
		media.Caption = m.Body
		msg.setMedia(mediaKind, media)
	default:
		msg.Type, msg.Text = "text", &outText{Body: m.Body, PreviewURL: strings.Contains(m.Body, "https://") || strings.Contains(m.Body, "http://")}
	}
	body, err := json.Marshal(msg)
	if err != nil {
		return nil, &failure{&provider.Error{Code: domain.CodeProviderError, Message: fmt.Sprintf("encode message: %v", err)}, refused}
	}
	return body, nil
}

func (m *outMessage) setMedia(kind string, o *mediaObject) {
	m.Type = kind
	switch kind {
	case "image":
		m.Image = o
	case "video":
		m.Video = o
	default:
		m.Document = o
	}
}

func (h *header) set(kind string, o *mediaObject) {
	o.Caption = "" // a header has no caption: the body is the text
	switch kind {
	case "image":
		h.Image = o
	case "video":
		h.Video = o
	default:
		h.Document = o
	}
}

func template(t domain.Template) *outTemplate {
	out := &outTemplate{Name: t.Name, Language: lang{Policy: "deterministic", Code: t.Language}}
	if len(t.Parameters) > 0 {
		body := comp{Type: "body"}
		for _, p := range t.Parameters {
			body.Parameters = append(body.Parameters, param{Type: "text", Text: p})
		}
		out.Components = []comp{body}
	}
	return out
}

func list(text string, l domain.List) *interactive {
	out := &interactive{Type: "list", Body: &outTextObject{Text: text}, Action: action{Button: l.Button}}
	for _, s := range l.Sections {
		sec := section{Title: s.Title}
		for _, r := range s.Rows {
			sec.Rows = append(sec.Rows, row(r))
		}
		out.Action.Sections = append(out.Action.Sections, sec)
	}
	return out
}

// buttonText is a call or url button written out as text.
func buttonText(b domain.Button) string {
	if b.Type == domain.URLButton {
		return b.Title + ": " + b.URL
	}
	return b.Title + ": +" + strings.TrimPrefix(b.Phone, "+")
}

// buttons is reply buttons, or the one call-to-action URL button (the
// channel rules allow a url button only alone).
func buttons(text string, bs []domain.Button) *interactive {
	if bs[0].Type == domain.URLButton {
		return &interactive{Type: "cta_url", Body: &outTextObject{Text: text},
			Action: action{Name: "cta_url", Parameters: &ctaURL{DisplayText: bs[0].Title, URL: bs[0].URL}}}
	}
	out := &interactive{Type: "button", Body: &outTextObject{Text: text}}
	for _, b := range bs {
		rb := replyButton{Type: "reply"}
		rb.Reply.ID, rb.Reply.Title = b.Payload, b.Title
		out.Action.Buttons = append(out.Action.Buttons, rb)
	}
	return out
}

// linkKind guesses what a media link is from its path, since the message
// keeps only the URL: the platform needs image, video or document, and a
// document carries any file, so anything unrecognised goes as one.
func linkKind(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "document"
	}
	switch strings.ToLower(path.Ext(u.Path)) {
	case ".jpg", ".jpeg", ".png":
		return "image"
	case ".mp4", ".3gp", ".3gpp":
		return "video"
	}
	return "document"
}
