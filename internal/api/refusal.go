package api

import (
	"errors"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// The send's core names the fields it refuses by domain path; the
// contract names them as POST /messages spells them. This file is the one
// place the two meet, both ways.

// restNames are the fields whose REST name is not their domain path.
var restNames = map[string]string{
	"channel":          "type",
	"sender":           "from",
	"text":             "message",
	"schedule":         "scheduledAt",
	"callback":         "callbackUrl",
	"fallback.channel": "fallback.type",
	"fallback.text":    "fallback.message",
}

// richPath is the domain path of a rich field of the body (media,
// buttons[1].title, fallback.message), for the problems the decoding finds.
func richPath(field string) string {
	switch {
	case field == "fallback.message":
		return "fallback.text"
	case field == "fallback" || strings.HasPrefix(field, "fallback."):
		return field
	}
	return "content." + field
}

// restField is the REST name of a problem's field. A problem that the
// decoding found already has it. single says the body gave "to": each
// recipient is then "to", as the whole list is when it is missing or given
// with "to".
func restField(f domain.FieldError, single bool) string {
	if f.Field != "" {
		return f.Field
	}
	p := f.Path
	if name, ok := restNames[p]; ok {
		return name
	}
	switch {
	case strings.HasPrefix(p, "content."):
		return strings.TrimPrefix(p, "content.")
	case p == "recipients" && f.Code == domain.FieldRequired:
		return "to"
	case single && strings.HasPrefix(p, "recipients["):
		return "to"
	}
	return p
}

// restFields names a send's refused fields as the body does.
func restFields(fs []domain.FieldError, single bool) []domain.FieldError {
	if fs == nil {
		return nil
	}
	out := make([]domain.FieldError, len(fs))
	for i, f := range fs {
		out[i] = f
		out[i].Field = restField(f, single)
	}
	return out
}

// restRefusal is a send's validation error or refusal with its fields
// named as the body names them; any other error is returned as it is.
func restRefusal(err error, single bool) error {
	if v, ok := domain.IsValidation(err); ok {
		return &domain.ValidationError{Detail: v.Detail, Fields: restFields(v.Fields, single)}
	}
	if rf := (*domain.Refusal)(nil); errors.As(err, &rf) {
		out := *rf
		out.Fields = restFields(rf.Fields, single)
		return &out
	}
	return err
}
