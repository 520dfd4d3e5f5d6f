package webhook

import (
	"encoding/base64"
	"strings"
	"testing"
)

// mustSecret is NewSecret in a test, which stops at an error.
func mustSecret(t *testing.T) string {
	t.Helper()
	s, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSecret(t *testing.T) {
	a, b := mustSecret(t), mustSecret(t)
	if a == b {
		t.Fatalf("two secrets are equal: %q", a)
	}
	for _, s := range []string{a, b} {
		if !strings.HasPrefix(s, "whsec_") {
			t.Errorf("secret %q lacks whsec_ prefix", s)
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
		if err != nil {
			t.Errorf("secret %q is not std base64: %v", s, err)
		}
		if len(raw) != 32 {
			t.Errorf("secret %q holds %d bytes, want 32", s, len(raw))
		}
		key, err := DecodeSecret(s)
		if err != nil || string(key) != string(raw) {
			t.Errorf("DecodeSecret(%q) = %x, %v; want %x", s, key, err, raw)
		}
	}
}

func TestDecodeSecret(t *testing.T) {
	b64 := func(n int) string { return base64.StdEncoding.EncodeToString(make([]byte, n)) }
	tests := []struct {
		name    string
		in      string
		wantLen int
		wantErr bool
	}{
		{"prefixed 32 bytes", "whsec_" + b64(32), 32, false},
		{"unprefixed 32 bytes", b64(32), 32, false},
		{"24 bytes (Standard Webhooks example)", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", 24, false},
		{"64 bytes", "whsec_" + b64(64), 64, false},
		{"empty", "", 0, true},
		{"prefix only", "whsec_", 0, true},
		{"bad base64", "whsec_not*base64!", 0, true},
		{"url-safe alphabet rejected", "whsec_" + strings.Repeat("-_", 16), 0, true},
		{"missing padding", "whsec_" + strings.TrimRight(b64(32), "="), 0, true},
		{"too short", "whsec_" + b64(16), 0, true},
		{"too long", "whsec_" + b64(65), 0, true},
		{"whitespace", " whsec_" + b64(32), 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			key, err := DecodeSecret(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("DecodeSecret(%q) error = %v, wantErr %v", tt.in, err, tt.wantErr)
			}
			if len(key) != tt.wantLen {
				t.Fatalf("DecodeSecret(%q) len = %d, want %d", tt.in, len(key), tt.wantLen)
			}
		})
	}
}
