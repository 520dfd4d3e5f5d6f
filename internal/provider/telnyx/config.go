package telnyx

import (
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"

	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// DefaultAPIURL is Telnyx's API; the v2 paths follow it.
const DefaultAPIURL = "https://api.telnyx.com"

// Config describes one Telnyx account sending SMS and MMS.
type Config struct {
	// APIKey is the API v2 key, sent as a bearer token.
	APIKey string `yaml:"apiKey"`
	// PublicKey is the account's webhook public key (base64 Ed25519, from
	// the portal): it checks telnyx-signature-ed25519.
	PublicKey string `yaml:"publicKey"`
	// MessagingProfileID sends through a messaging profile (its number
	// pool); From or it is required.
	MessagingProfileID string `yaml:"messagingProfileId"`
	// Account holds the sending number From, the API's base and the
	// tuning. Its PublicURL, when set, is the address Telnyx calls back:
	// each send names PublicURL/providers/telnyx/webhook as its
	// webhook_url. Without it, the messaging profile's webhook URL is used.
	httpcall.Account `yaml:",inline"`
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	p := httpcall.Checking(TypeName)
	if c.APIKey == "" {
		p.Add("APIKey", "is required")
	}
	if c.PublicKey == "" {
		p.Add("PublicKey", "is required: the account's webhook public key, base64")
	} else if _, err := publicKey(c.PublicKey); err != nil {
		p.Add("PublicKey", "%v", err)
	}
	if c.From == "" && c.MessagingProfileID == "" {
		p.Add("From", "or messagingProfileId is required")
	}
	p.URL("APIURL", c.APIURL)
	p.URL("PublicURL", c.PublicURL)
	return p.Err(c.Tuning)
}

func publicKey(s string) (ed25519.PublicKey, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, errors.New("must be a base64 Ed25519 public key (32 bytes)")
	}
	return ed25519.PublicKey(b), nil
}

func (c Config) withDefaults() Config {
	c.Account = c.Defaults(TypeName, DefaultAPIURL)
	return c
}
