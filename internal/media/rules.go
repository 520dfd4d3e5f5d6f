package media

import (
	"fmt"
	"strings"
)

// Channel names as the send API spells them (upper case).
const (
	ChannelWhatsApp = "WHATSAPP"
	ChannelRCS      = "RCS"
)

// RuleError is a channel rule that a file breaks. Its text names the
// rule, so the send path can show it as the field's message.
type RuleError struct {
	Channel string
	Reason  string
}

func (e *RuleError) Error() string { return e.Reason }

// rule is one channel's limit for one kind of file.
type rule struct {
	maxSize int64
	types   []Type
}

// rules returns the seed's limits table for a channel, or nil for a channel
// that carries no media.
func rules(channel string) map[Kind]rule {
	docs := []Type{PDF, DOC, XLS, PPT, DOCX, XLSX, PPTX}
	switch channel {
	case ChannelWhatsApp:
		return map[Kind]rule{
			Image:    {MaxImageSize, []Type{JPEG, PNG}},
			Video:    {maxVideoSize, []Type{MP4, GPP}},
			Document: {maxDocSize, docs},
		}
	case ChannelRCS:
		return map[Kind]rule{
			Image:    {MaxImageSize, []Type{JPEG, PNG, GIF}},
			Video:    {maxVideoSize, []Type{MP4, GPP}},
			Document: {maxDocSize, docs},
		}
	}
	return nil
}

func channelName(ch string) string {
	if ch == ChannelWhatsApp {
		return "WhatsApp"
	}
	return ch
}

// CheckFor applies a channel's media limits (type and size per kind) to an
// uploaded file. channel is SMS, WHATSAPP or RCS in any case; SMS carries
// no media. The error is a *RuleError.
func CheckFor(channel string, it Item) error {
	return checkType(strings.ToUpper(channel), it.MIME, it.Size)
}

// checkType checks a MIME type and a size (negative: unknown) against a
// channel's rules.
func checkType(channel, mime string, size int64) error {
	rs := rules(channel)
	if rs == nil {
		return &RuleError{channel, fmt.Sprintf("%s messages cannot carry media; use WHATSAPP or RCS", channel)}
	}
	t, known := TypeOf(mime)
	r, ok := rs[t.Kind]
	if !known || !ok || !hasType(r.types, t) {
		return &RuleError{channel, fmt.Sprintf("%s does not accept %s; it takes %s", channelName(channel), describe(t, mime), accepted(rs))}
	}
	if size > r.maxSize {
		return &RuleError{channel, fmt.Sprintf("%s %ss are limited to %d MB (%d bytes); this one is %d bytes",
			channelName(channel), t.Kind, r.maxSize/MB, r.maxSize, size)}
	}
	return nil
}

func hasType(ts []Type, t Type) bool {
	for _, x := range ts {
		if x == t {
			return true
		}
	}
	return false
}

func describe(t Type, mime string) string {
	if t.Name != "" {
		return t.Name + " " + string(t.Kind) + "s"
	}
	return mime
}

// accepted spells a channel's table: "images JPG/PNG up to 5 MB, …".
func accepted(rs map[Kind]rule) string {
	var parts []string
	for _, k := range []Kind{Image, Video, Document} {
		r := rs[k]
		var names []string
		for _, t := range r.types {
			names = append(names, t.Name)
		}
		parts = append(parts, fmt.Sprintf("%ss (%s) up to %d MB", k, strings.Join(names, ", "), r.maxSize/MB))
	}
	return strings.Join(parts, "; ")
}
