package rbm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"
)

// serviceAccount is the part of Google's service-account key file that
// the JWT bearer flow needs.
type serviceAccount struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKey   string `json:"private_key"`
	PrivateKeyID string `json:"private_key_id"`
	TokenURI     string `json:"token_uri"`
}

// parseCredentials reads a service-account key. Its errors name the
// missing field, never a value.
func parseCredentials(raw []byte) (serviceAccount, error) {
	var sa serviceAccount
	if err := json.Unmarshal(raw, &sa); err != nil {
		return sa, errors.New("rbm config: Credentials is not a JSON service-account key")
	}
	var missing []string
	for _, f := range []struct{ name, v string }{{"client_email", sa.ClientEmail}, {"private_key", sa.PrivateKey}, {"token_uri", sa.TokenURI}} {
		if f.v == "" {
			missing = append(missing, f.name)
		}
	}
	switch {
	case sa.Type != "service_account":
		return sa, fmt.Errorf("rbm config: Credentials has type %q; a service-account key (\"service_account\") is needed", sa.Type)
	case len(missing) > 0:
		return sa, fmt.Errorf("rbm config: Credentials lacks %v", missing)
	}
	return sa, nil
}

// tokenSource signs a JWT assertion with the service account's key and
// trades it for an access token at the key's token_uri (RFC 7523), through
// the given client; the library caches the token and gets a new one
// shortly before it expires.
func tokenSource(sa serviceAccount, client *http.Client) oauth2.TokenSource {
	cfg := &jwt.Config{Email: sa.ClientEmail, PrivateKey: []byte(sa.PrivateKey), PrivateKeyID: sa.PrivateKeyID,
		Scopes: []string{Scope}, TokenURL: sa.TokenURI}
	// The context only carries the HTTP client: the token source lives as
	// long as the adapter, and each request is bounded by the client.
	return cfg.TokenSource(context.WithValue(context.Background(), oauth2.HTTPClient, client))
}
