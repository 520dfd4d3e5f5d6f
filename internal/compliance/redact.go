package compliance

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/msgsvc/msgsvc/internal/webhook"
)

// RedactedPrefix begins a phone number that was replaced by its keyed hash.
const RedactedPrefix = "redacted:"

// MinKeyBytes is the shortest redaction key accepted.
const MinKeyBytes = 32

// Redactor replaces personal data for retention: a phone number becomes
// "redacted:" and 32 hex digits of HMAC-SHA256 under a server key. Phone
// numbers are few enough (about 10^10 per country) that a plain hash could
// be reversed by trying them all; under a key kept outside the database,
// a copy of the database alone cannot. The same number always gives the
// same hash under one key, so counts of distinct recipients survive.
type Redactor struct{ key []byte }

// NewRedactor uses key, which must be at least MinKeyBytes long.
func NewRedactor(key []byte) (*Redactor, error) {
	if len(key) < MinKeyBytes {
		return nil, fmt.Errorf("redaction key: %d bytes, need at least %d", len(key), MinKeyBytes)
	}
	return &Redactor{key: append([]byte(nil), key...)}, nil
}

// Phone is the keyed hash of a phone number; one already redacted is
// returned as it is, so redacting twice changes nothing.
func (r *Redactor) Phone(phone string) string {
	if Redacted(phone) || phone == "" {
		return phone
	}
	m := hmac.New(sha256.New, r.key)
	m.Write([]byte(phone))
	return RedactedPrefix + hex.EncodeToString(m.Sum(nil)[:16])
}

// EventBody is a stored webhook body with its phone number hashed and a
// reply's text erased.
func (r *Redactor) EventBody(body string) (string, error) {
	return webhook.RedactBody(body, r.Phone)
}

// Redacted reports whether a phone number was replaced by its hash.
func Redacted(phone string) bool { return strings.HasPrefix(phone, RedactedPrefix) }

// NewKey makes a random redaction key in its text form (base64).
func NewKey() string {
	b := make([]byte, MinKeyBytes)
	_, _ = rand.Read(b) // never fails on supported platforms
	return base64.StdEncoding.EncodeToString(b)
}

// ParseKey reads a key's text form: base64 (standard or URL alphabet,
// padded or not) of at least MinKeyBytes bytes.
func ParseKey(text string) ([]byte, error) {
	text = strings.TrimSpace(text)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(text); err == nil {
			if len(b) < MinKeyBytes {
				return nil, fmt.Errorf("redaction key: %d bytes, need at least %d", len(b), MinKeyBytes)
			}
			return b, nil
		}
	}
	return nil, errors.New("redaction key: not base64")
}
