package vonage

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// DefaultAPIURL is the SMS API's host; /sms/json follows it.
const DefaultAPIURL = "https://rest.nexmo.com"

// The signature methods of Vonage's signed webhooks, as the dashboard
// names them; md5hash is Vonage's default.
var signatureMethods = []string{"md5hash", "md5", "sha1", "sha256", "sha512"}

// Config describes one Vonage account sending SMS over the SMS API.
type Config struct {
	// Name is the provider's name in webhooks and metrics (default
	// "vonage").
	Name string `yaml:"-"`
	// APIKey and APISecret are the account's credentials, sent in the
	// form.
	APIKey    string `yaml:"apiKey"`
	APISecret string `yaml:"apiSecret"`
	// SignatureSecret checks the sig of signed webhooks (delivery
	// receipts and inbound SMS); SignatureMethod is the method chosen in
	// the dashboard (default md5hash).
	SignatureSecret string `yaml:"signatureSecret"`
	SignatureMethod string `yaml:"signatureMethod"`
	// From is the sender (a number or an alphanumeric id) when a message
	// names none.
	From string `yaml:"from"`
	// APIURL is the SMS API's base (default DefaultAPIURL).
	APIURL string `yaml:"apiUrl"`
	// PublicURL, when set, is the address Vonage calls back: each send
	// names PublicURL/providers/vonage/status as its callback. Without it,
	// the account's delivery receipt URL is used.
	PublicURL string `yaml:"publicUrl"`
	// Tuning holds the request timeout and the retries.
	httpcall.Tuning `yaml:",inline"`
}

// OwnSender is From, "" when the platform picks the number from a pool
// (provider.OwnSender).
func (c Config) OwnSender() string { return c.From }

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &provider.FieldError{Type: TypeName, Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	for _, f := range []struct{ name, v string }{{"APIKey", c.APIKey}, {"APISecret", c.APISecret},
		{"SignatureSecret", c.SignatureSecret}, {"From", c.From}} {
		if f.v == "" {
			bad(f.name, "is required")
		}
	}
	if c.SignatureMethod != "" && !slices.Contains(signatureMethods, c.SignatureMethod) {
		bad("SignatureMethod", "must be one of %s", strings.Join(signatureMethods, ", "))
	}
	for _, u := range []struct{ field, v string }{{"APIURL", c.APIURL}, {"PublicURL", c.PublicURL}} {
		if u.v != "" && !httpcall.IsURL(u.v) {
			bad(u.field, "%q is not an http(s) URL", u.v)
		}
	}
	if c.Negative() {
		bad("RequestTimeout", "and the retry settings must not be negative")
	}
	return errors.Join(errs...)
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = TypeName
	}
	if c.APIURL == "" {
		c.APIURL = DefaultAPIURL
	}
	if c.SignatureMethod == "" {
		c.SignatureMethod = "md5hash"
	}
	c.APIURL = strings.TrimRight(c.APIURL, "/")
	c.PublicURL = strings.TrimRight(c.PublicURL, "/")
	return c
}
