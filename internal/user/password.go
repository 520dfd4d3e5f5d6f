// Package user handles panel users' credentials: argon2id password hashes
// and session tokens.
package user

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/argon2"
)

// Roles, from most to least powerful. Operator is the service's own
// staff: a user of no account who works across all of them.
const (
	Operator  = "operator"
	Owner     = "owner"
	Admin     = "admin"
	Developer = "developer"
	Viewer    = "viewer"
)

// ValidRole reports whether r is a role within an account.
func ValidRole(r string) bool { return r == Owner || r == Admin || r == Developer || r == Viewer }

// Hasher makes argon2id password hashes at its cost. A hash names its own
// cost, so VerifyPassword checks hashes of any cost, and a cost changed
// later applies to passwords set from then on.
type Hasher struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

// Recommended is the RFC 9106 second recommendation (64 MiB, 3 passes),
// which costs tens of milliseconds per login.
func Recommended() Hasher { return Hasher{Time: 3, Memory: 64 * 1024, Threads: 2} }

const argonKeyLen = 32

// Hash returns a PHC-formatted argon2id hash of pw; the zero Hasher hashes
// at the Recommended cost.
func (h Hasher) Hash(pw string) (string, error) {
	if h == (Hasher{}) {
		h = Recommended()
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", err
	}
	sum := argon2.IDKey([]byte(pw), salt, h.Time, h.Memory, h.Threads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, h.Memory, h.Time, h.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(sum)), nil
}

// HashPassword hashes pw at the Recommended cost.
func HashPassword(pw string) (string, error) { return Recommended().Hash(pw) }

// ErrBadHash: a stored hash that cannot be read.
var ErrBadHash = errors.New("unreadable password hash")

// VerifyPassword checks pw against a hash made by HashPassword, in
// constant time.
func VerifyPassword(hash, pw string) (bool, error) {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false, ErrBadHash
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil {
		return false, ErrBadHash
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil {
		return false, ErrBadHash
	}
	want, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil {
		return false, ErrBadHash
	}
	got := argon2.IDKey([]byte(pw), salt, t, m, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// NewToken makes a session token and the hash under which it is stored.
func NewToken() (token, hash string, err error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", "", err
	}
	token = "sess_" + base64.RawURLEncoding.EncodeToString(b)
	return token, TokenHash(token), nil
}

// TokenHash is the stored form of a session token.
func TokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// NewPassword generates a password for users created without one.
func NewPassword() (string, error) {
	b := make([]byte, 18)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(b), nil
}
