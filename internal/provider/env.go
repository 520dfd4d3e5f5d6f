package provider

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Env reads an adapter's environment shortcut and collects every malformed
// value, so that one start names them all.
type Env struct {
	get  func(string) string
	errs []error
}

// NewEnv reads variables with getenv (os.Getenv, or a test's map).
func NewEnv(getenv func(string) string) *Env { return &Env{get: getenv} }

// String is the variable's value, "" when unset.
func (e *Env) String(key string) string { return e.get(key) }

// Int is a whole number, def when unset.
func (e *Env) Int(key string, def int) int {
	v := e.get(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %q is not a whole number", key, v))
	}
	return n
}

// Duration is a Go duration (10m, 90s), 0 when unset.
func (e *Env) Duration(key string) time.Duration {
	v := e.get(key)
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		e.errs = append(e.errs, fmt.Errorf("%s: %q is not a duration (e.g. 10m)", key, v))
	}
	return d
}

// Err is every malformed value read so far.
func (e *Env) Err() error { return errors.Join(e.errs...) }

// Shortcut reads an adapter's environment shortcut: the variable key, set,
// makes one provider of the type, which fill configures from key's value
// and the other variables; unset, there is none (ok false). err is every
// malformed value fill read.
func Shortcut[C any](getenv func(string) string, key string, fill func(v string, e *Env) C) (c C, ok bool, err error) {
	e := NewEnv(getenv)
	v := e.String(key)
	if v == "" {
		return c, false, nil
	}
	c = fill(v, e)
	return c, true, e.Err()
}
