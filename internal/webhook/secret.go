// Package webhook holds the building blocks for delivering signed event
// callbacks: Standard Webhooks secrets and signatures, SSRF-safe target
// validation, the outbound HTTP client and the retry schedule.
package webhook

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// SecretPrefix marks a webhook signing secret so it is recognisable in
// configs and logs, as the Standard Webhooks specification recommends.
const SecretPrefix = "whsec_"

const (
	// secretLen is what we generate: 32 bytes equals SHA-256's output, the
	// full strength an HMAC-SHA256 key can carry.
	secretLen = 32
	// Bounds accepted when decoding, so secrets issued by other Standard
	// Webhooks producers (24 bytes is common) can be imported.
	minSecretLen = 24
	maxSecretLen = 64
)

// NewSecret returns a fresh signing secret: SecretPrefix followed by the
// standard base64 encoding of 32 random bytes.
func NewSecret() (string, error) {
	b := make([]byte, secretLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("webhook: generate secret: %w", err)
	}
	return SecretPrefix + base64.StdEncoding.EncodeToString(b), nil
}

// DecodeSecret returns the HMAC key held in a secret. The prefix is
// optional so that raw base64 secrets from other producers also work.
func DecodeSecret(s string) ([]byte, error) {
	enc := strings.TrimPrefix(s, SecretPrefix)
	if enc == "" {
		return nil, errors.New("webhook: empty secret")
	}
	key, err := base64.StdEncoding.DecodeString(enc)
	if err != nil {
		return nil, fmt.Errorf("webhook: decode secret: %w", err)
	}
	if len(key) < minSecretLen || len(key) > maxSecretLen {
		return nil, fmt.Errorf("webhook: secret is %d bytes, want %d to %d", len(key), minSecretLen, maxSecretLen)
	}
	return key, nil
}
