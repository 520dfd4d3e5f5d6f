package vonage

import (
	"slices"
	"strings"

	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// DefaultAPIURL is the SMS API's host; /sms/json follows it.
const DefaultAPIURL = "https://rest.nexmo.com"

// The signature methods of Vonage's signed webhooks, as the dashboard
// names them; md5hash is Vonage's default.
var signatureMethods = []string{"md5hash", "md5", "sha1", "sha256", "sha512"}

// Config describes one Vonage account sending SMS over the SMS API.
type Config struct {
	// APIKey and APISecret are the account's credentials, sent in the
	// form.
	APIKey    string `yaml:"apiKey"`
	APISecret string `yaml:"apiSecret"`
	// SignatureSecret checks the sig of signed webhooks (delivery
	// receipts and inbound SMS); SignatureMethod is the method chosen in
	// the dashboard (default md5hash).
	SignatureSecret string `yaml:"signatureSecret"`
	SignatureMethod string `yaml:"signatureMethod"`
	// Account holds the sender From (required), the SMS API's base and
	// the tuning. Its PublicURL, when set, is the address Vonage calls
	// back: each send names PublicURL/providers/vonage/status as its
	// callback. Without it, the account's delivery receipt URL is used.
	httpcall.Account `yaml:",inline"`
}

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	p := httpcall.Checking(TypeName)
	for _, f := range []struct{ name, v string }{{"APIKey", c.APIKey}, {"APISecret", c.APISecret},
		{"SignatureSecret", c.SignatureSecret}, {"From", c.From}} {
		if f.v == "" {
			p.Add(f.name, "is required")
		}
	}
	if c.SignatureMethod != "" && !slices.Contains(signatureMethods, c.SignatureMethod) {
		p.Add("SignatureMethod", "must be one of %s", strings.Join(signatureMethods, ", "))
	}
	p.URL("APIURL", c.APIURL)
	p.URL("PublicURL", c.PublicURL)
	return p.Err(c.Tuning)
}

func (c Config) withDefaults() Config {
	c.Account = c.Defaults(TypeName, DefaultAPIURL)
	if c.SignatureMethod == "" {
		c.SignatureMethod = "md5hash"
	}
	return c
}
