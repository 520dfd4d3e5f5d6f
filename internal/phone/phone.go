// Package phone validates recipient numbers against libphonenumber's
// metadata: a number must be dialable in its country, not merely digits.
package phone

import (
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/nyaruka/phonenumbers"
)

// Number is a validated international number.
type Number struct {
	Digits      string // E.164 without the plus: country code first
	CountryCode string // calling code, e.g. "55"
	Region      string // ISO region, e.g. "BR"
}

// Errors name what is wrong in words an integrator can act on.
var (
	ErrFormat  = errors.New("must be 8 to 15 digits, country code first, with at most one leading + and no spaces")
	ErrInvalid = errors.New("is not a valid phone number for its country")
)

// Parse checks E.164 input (digits, country code first, with or without
// one leading "+") and that the number exists in the numbering plan of its
// country. Number.Digits never has the "+": numbers are stored and echoed
// as digits.
func Parse(s string) (Number, error) {
	return parse(strings.TrimPrefix(s, "+"))
}

func parse(digits string) (Number, error) {
	if err := checkFormat(digits); err != nil {
		return Number{}, err
	}
	return parseFull(digits)
}

func checkFormat(digits string) error {
	if len(digits) < 8 || len(digits) > 15 || digits[0] == '0' {
		return ErrFormat
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return ErrFormat
		}
	}
	return nil
}

// parseFull hands the number to libphonenumber's general text parser,
// which is what the calling-code table imitates and where it defers when
// unsure.
func parseFull(digits string) (Number, error) {
	n, err := phonenumbers.Parse("+"+digits, "")
	if err != nil {
		return Number{}, ErrInvalid
	}
	return validate(digits, n)
}

// validate is IsValidNumber, keeping the region it works out rather than
// having GetRegionCodeForNumber run its patterns a second time.
func validate(digits string, n *phonenumbers.PhoneNumber) (Number, error) {
	region := phonenumbers.GetRegionCodeForNumber(n)
	if !phonenumbers.IsValidNumberForRegion(n, region) {
		return Number{}, ErrInvalid
	}
	return number(digits, n, region), nil
}

// number is the valid number digits, which libphonenumber read as n, of
// region.
func number(digits string, n *phonenumbers.PhoneNumber, region string) Number {
	return Number{Digits: digits, CountryCode: strconv.Itoa(int(n.GetCountryCode())), Region: region}
}

// Validator is Parse with a memory of recent answers: libphonenumber's
// regular expressions cost tens of microseconds per number, and
// integrators send to the same numbers again and again.
type Validator struct {
	codes *callingCodes
	mu    sync.Mutex
	cache map[string]result
	max   int
}

type result struct {
	n   Number
	err error
}

// NewValidator remembers up to max numbers (the cache is simply emptied
// when full: cheap, and bounded).
func NewValidator(max int) *Validator {
	return &Validator{codes: newCallingCodes(), cache: make(map[string]result, 1024), max: max}
}

// Parse is phone.Parse, cached, and quicker on a miss: the calling-code
// table spares most numbers libphonenumber's text parser.
func (v *Validator) Parse(s string) (Number, error) {
	digits := strings.TrimPrefix(s, "+")
	v.mu.Lock()
	r, ok := v.cache[digits]
	v.mu.Unlock()
	if ok {
		return r.n, r.err
	}
	n, err := v.codes.parse(digits)
	v.mu.Lock()
	if len(v.cache) >= v.max {
		clear(v.cache)
	}
	v.cache[digits] = result{n, err}
	v.mu.Unlock()
	return n, err
}
