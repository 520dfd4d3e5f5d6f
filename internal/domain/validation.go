package domain

import (
	"errors"
	"fmt"
)

// FieldError names one invalid field.
type FieldError struct {
	Field   string `json:"field"`
	Message string `json:"message"`
}

func (e *FieldError) Error() string { return e.Field + " " + e.Message }

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
		return e.Fields[0].Field + " " + e.Fields[0].Message
	}
	return "invalid request"
}

// Add records one field problem.
func (e *ValidationError) Add(field, format string, args ...any) {
	e.Fields = append(e.Fields, FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// Failed reports whether any problem was recorded.
func (e *ValidationError) Failed() bool { return len(e.Fields) > 0 || e.Detail != "" }

// IsValidation reports whether err is a validation error.
func IsValidation(err error) (*ValidationError, bool) {
	var v *ValidationError
	ok := errors.As(err, &v)
	return v, ok
}
