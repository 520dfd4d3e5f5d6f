// Package apikey makes and recognises API keys. A key is shown once and
// stored only as a SHA-256 hash: keys carry 238 bits of entropy, so a fast
// hash is safe (no dictionary to guess from) and keeps authentication, which
// happens on every request, cheap.
package apikey

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
)

// Environments.
const (
	Live = "live"
	Test = "test"
)

const (
	bodyLen  = 40
	alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
)

// ErrMalformed is returned for strings that cannot be keys.
var ErrMalformed = errors.New("not an API key")

// Key is a freshly generated key.
type Key struct {
	Secret string // the full key, to show once
	Prefix string // kept for display: "svc_live_AbCd"
	Hash   string
	Env    string
}

// Generate makes a key for an environment from the system CSPRNG.
func Generate(env string) (Key, error) {
	if env != Live && env != Test {
		return Key{}, errors.New("environment must be live or test")
	}
	var b strings.Builder
	b.WriteString("svc_" + env + "_")
	// Rejection sampling keeps every character equally likely.
	buf := make([]byte, 64)
	for n := 0; n < bodyLen; {
		if _, err := rand.Read(buf); err != nil {
			return Key{}, err
		}
		for _, c := range buf {
			if c >= 248 { // 248 = 4 × 62: larger values would bias the result
				continue
			}
			b.WriteByte(alphabet[int(c)%len(alphabet)])
			n++
			if n == bodyLen {
				break
			}
		}
	}
	s := b.String()
	return Key{Secret: s, Prefix: s[:len("svc_"+env+"_")+4], Hash: Hash(s), Env: env}, nil
}

// Parse checks a key's form and returns its environment.
func Parse(s string) (env string, err error) {
	var body string
	switch {
	case strings.HasPrefix(s, "svc_live_"):
		env, body = Live, s[len("svc_live_"):]
	case strings.HasPrefix(s, "svc_test_"):
		env, body = Test, s[len("svc_test_"):]
	default:
		return "", ErrMalformed
	}
	if len(body) != bodyLen {
		return "", ErrMalformed
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return "", ErrMalformed
		}
	}
	return env, nil
}

// Hash is the stored form of a key.
func Hash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}
