package api

import (
	"errors"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// The core's domain paths come back as the names of POST /messages.
func TestRESTFieldNames(t *testing.T) {
	cases := []struct {
		f      domain.FieldError
		single bool
		want   string
	}{
		{domain.FieldError{Path: "channel", Code: domain.FieldRequired}, false, "type"},
		{domain.FieldError{Path: "recipients", Code: domain.FieldRequired}, false, "to"},
		{domain.FieldError{Path: "recipients", Code: domain.FieldRange}, false, "recipients"},
		{domain.FieldError{Path: "recipients[3]", Code: domain.FieldInvalid}, false, "recipients[3]"},
		{domain.FieldError{Path: "recipients[0]", Code: domain.FieldInvalid}, true, "to"},
		{domain.FieldError{Path: "text", Code: domain.FieldRequired}, false, "message"},
		{domain.FieldError{Path: "sender", Code: domain.FieldNotApproved}, false, "from"},
		{domain.FieldError{Path: "content.media.url", Code: domain.FieldInvalid}, false, "media.url"},
		{domain.FieldError{Path: "content.cards[1].buttons[0].title", Code: domain.FieldInvalid}, false, "cards[1].buttons[0].title"},
		{domain.FieldError{Path: "fallback", Code: domain.FieldUnavailable}, false, "fallback"},
		{domain.FieldError{Path: "fallback.channel", Code: domain.FieldRequired}, false, "fallback.type"},
		{domain.FieldError{Path: "fallback.text", Code: domain.FieldInvalid}, false, "fallback.message"},
		{domain.FieldError{Path: "callback", Code: domain.FieldInvalid}, false, "callbackUrl"},
		{domain.FieldError{Path: "schedule", Code: domain.FieldRange}, false, "scheduledAt"},
		{domain.FieldError{Path: "validity", Code: domain.FieldRange}, false, "validity"},
		{domain.FieldError{Path: "reference", Code: domain.FieldRange}, false, "reference"},
		// A problem the decoding found keeps the name it was found under.
		{domain.FieldError{Field: "fallback.text", Path: "fallback.text", Code: domain.FieldUnknown}, false, "fallback.text"},
	}
	for _, c := range cases {
		if got := restField(c.f, c.single); got != c.want {
			t.Errorf("%s (%s, single %v): %q, want %q", c.f.Path, c.f.Code, c.single, got, c.want)
		}
	}
}

// A refusal keeps its code, detail and cause; only its fields are renamed,
// on a copy.
func TestRESTRefusalCopies(t *testing.T) {
	in := &domain.Refusal{Code: "RECIPIENT_OPTED_OUT", Detail: "d", Err: errors.New("cause"),
		Fields: []domain.FieldError{{Path: "recipients[0]", Code: domain.FieldInvalid, Message: "m"}}}
	out := restRefusal(in, true)
	var rf *domain.Refusal
	if !errors.As(out, &rf) || rf.Code != in.Code || rf.Detail != "d" || !errors.Is(out, in.Err) || rf.Fields[0].Field != "to" {
		t.Fatalf("mapped refusal %+v", out)
	}
	if in.Fields[0].Field != "" {
		t.Fatal("the core's refusal was changed in place")
	}
	p := toProblem(restRefusal(&domain.ValidationError{Fields: []domain.FieldError{{Path: "text", Code: domain.FieldRequired,
		Message: "is required"}}}, false))
	if p.Detail != "The request is not valid: message is required." || p.Errors[0].Field != "message" {
		t.Fatalf("problem %+v", p)
	}
}
