package rbmtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// token is the OAuth 2.0 token endpoint of a service account (RFC 7523):
// it takes a JWT bearer assertion signed with the account's key and
// answers an access token. The assertion must be RS256 with the key's id,
// signed by the key, issued by the account's email, meant for this
// endpoint, asking for the RBM scope, and current.
func (p *Platform) token(w http.ResponseWriter, r *http.Request) {
	oauthError := func(code int, e, desc string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": e, "error_description": desc})
	}
	if err := r.ParseForm(); err != nil {
		oauthError(400, "invalid_request", "the body is not a form")
		return
	}
	if gt := r.PostForm.Get("grant_type"); gt != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		oauthError(400, "unsupported_grant_type", "grant_type "+gt)
		return
	}
	p.mu.Lock()
	refuse := p.refuseTokens > 0
	if refuse {
		p.refuseTokens--
	}
	p.mu.Unlock()
	if refuse {
		oauthError(400, "invalid_grant", "Invalid JWT Signature.")
		return
	}
	if err := p.checkAssertion(r.PostForm.Get("assertion")); err != nil {
		oauthError(400, "invalid_grant", err.Error())
		return
	}
	raw := make([]byte, 24)
	_, _ = rand.Read(raw)
	tok := "ya29.test-" + hex.EncodeToString(raw)
	p.mu.Lock()
	p.tokens[tok] = true
	p.tokenRequests++
	p.mu.Unlock()
	writeJSON(w, map[string]any{"access_token": tok, "expires_in": 3599, "token_type": "Bearer"})
}

func (p *Platform) checkAssertion(jwt string) error {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return fmt.Errorf("the assertion is not a JWT")
	}
	var header struct {
		Alg, Typ, Kid string
	}
	var claims struct {
		Iss, Scope, Aud, Sub string
		Iat, Exp             int64
	}
	for i, v := range []any{&header, &claims} {
		b, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			return fmt.Errorf("JWT part %d is not base64url", i)
		}
		if err := json.Unmarshal(b, v); err != nil {
			return fmt.Errorf("JWT part %d is not JSON", i)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		return fmt.Errorf("the signature is not base64url")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	now := p.now().Unix()
	switch {
	case header.Alg != "RS256" || header.Kid != p.keyID:
		return fmt.Errorf("alg %q kid %q: want RS256 and the key's id", header.Alg, header.Kid)
	case rsa.VerifyPKCS1v15(&p.key.PublicKey, crypto.SHA256, sum[:], sig) != nil:
		return fmt.Errorf("invalid JWT signature")
	case claims.Iss != p.ClientEmail:
		return fmt.Errorf("iss %q is not the service account", claims.Iss)
	case claims.Aud != p.TokenURL():
		return fmt.Errorf("aud %q is not this token endpoint", claims.Aud)
	case claims.Scope != Scope:
		return fmt.Errorf("scope %q: want %s", claims.Scope, Scope)
	case claims.Iat > now+60 || claims.Exp < now || claims.Exp-claims.Iat > int64(time.Hour/time.Second):
		return fmt.Errorf("iat %d exp %d: not current, or longer than an hour", claims.Iat, claims.Exp)
	}
	return nil
}
