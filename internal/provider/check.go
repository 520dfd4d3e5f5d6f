package provider

import (
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Problems gathers every problem of one adapter's configuration, each a
// *FieldError of its type, so that Validate reports them at once.
type Problems struct {
	typ  string
	errs []error
}

// Checking starts the problems of a configuration of type typ.
func Checking(typ string) *Problems { return &Problems{typ: typ} }

// Add notes a problem of field.
func (p *Problems) Add(field, format string, args ...any) {
	p.errs = append(p.errs, &FieldError{Type: p.typ, Field: field, Msg: fmt.Sprintf(format, args...)})
}

// Also notes a problem that is not one field's, or is one already.
func (p *Problems) Also(err error) { p.errs = append(p.errs, err) }

// Required notes field when its value v is empty.
func (p *Problems) Required(field, v string) {
	if v == "" {
		p.Add(field, "is required")
	}
}

// URL notes field when its value v is set and not an http(s) address.
func (p *Problems) URL(field, v string) {
	if v != "" && !IsURL(v) {
		p.Add(field, "%q is not an http(s) URL", v)
	}
}

// Duration notes field when its value v is negative.
func (p *Problems) Duration(field string, v time.Duration) {
	if v < 0 {
		p.Add(field, "is negative (%v)", v)
	}
}

// Err is every problem noted, joined; nil when none.
func (p *Problems) Err() error { return errors.Join(p.errs...) }

// IsURL reports whether s is an absolute http or https address.
func IsURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "https" || u.Scheme == "http") && u.Host != ""
}

// Default sets the setting at v to d when it is unset (zero).
func Default[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
