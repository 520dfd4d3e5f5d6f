package domain

import (
	"errors"
	"fmt"
)

// FieldError names one invalid field. Path and Code are the core's: the
// field in the domain's own names (recipients[3], content.media.url,
// schedule) and a stable kind of problem, which each front maps to its
// wire. Field is the name on a front's wire; a front fills it (its own
// decoding problems name it at once, the core's refusals are mapped).
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
	Path    string `json:"-"`
	Code    string `json:"-"`
}

// Codes of field problems: what is wrong, whatever the field.
const (
	FieldRequired    = "required"     // absent
	FieldInvalid     = "invalid"      // present, but not a value the field takes
	FieldConflict    = "conflict"     // given together with a field it excludes
	FieldRange       = "out_of_range" // too long, too many, too late, too early
	FieldDuplicate   = "duplicate"    // repeats an earlier item
	FieldUnavailable = "unavailable"  // not available on the channel asked for
	FieldNotApproved = "not_approved" // a sender the account may not use
	FieldNotAllowed  = "not_allowed"  // a destination the account may not send to
	FieldWrongType   = "wrong_type"   // a front's decoding: not the JSON type of the field
	FieldUnknown     = "unknown"      // a front's decoding: no such field
	FieldMalformed   = "malformed"    // a front's decoding: not parsable at all
)

// Name is how the field is named in words: its wire name when a front gave
// one, else its domain path.
func (e *FieldError) Name() string {
	if e.Field != "" {
		return e.Field
	}
	return e.Path
}

func (e *FieldError) Error() string { return e.Name() + " " + e.Message }

// ValidationError is a refused request, with every field problem found.
type ValidationError struct {
	Detail string
	Fields []FieldError
}

func (e *ValidationError) Error() string {
	if e.Detail != "" {
		return e.Detail
	}
	if len(e.Fields) > 0 {
		return e.Fields[0].Error()
	}
	return "invalid request"
}

// Add records one field problem by its wire name.
func (e *ValidationError) Add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// AddAt records one field problem by its domain path and code.
func (e *ValidationError) AddAt(path, code, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Path: path, Code: code, Message: fmt.Sprintf(format, args...)})
}

// Failed reports whether any problem was recorded.
func (e *ValidationError) Failed() bool { return len(e.Fields) > 0 || e.Detail != "" }

// IsValidation reports whether err is a validation error.
func IsValidation(err error) (*ValidationError, bool) {
	var v *ValidationError
	ok := errors.As(err, &v)
	return v, ok
}

// Refusal is a send refused by a channel rule rather than by the shape of a
// field: Code is OUTSIDE_CONVERSATION_WINDOW, RECIPIENT_OPTED_OUT or
// DAILY_LIMIT_REACHED, and each front decides how it answers each code.
// Fields name the recipients concerned by domain path (recipients[i]).
type Refusal struct {
	Code   string
	Detail string
	Fields []FieldError
	Err    error
}

func (r *Refusal) Error() string { return r.Code + ": " + r.Detail }

// Unwrap gives the refusal's cause (ErrDailyLimit, or the error of the
// rule that refused).
func (r *Refusal) Unwrap() error { return r.Err }
