package twilio

import (
	"regexp"

	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/httpcall"
)

// DefaultAPIURL is Twilio's REST API; the 2010-04-01 paths follow it.
const DefaultAPIURL = "https://api.twilio.com"

// Config describes one Twilio account sending SMS and MMS.
type Config struct {
	// AccountSID (AC…) and AuthToken are the account's credentials; the
	// token also keys X-Twilio-Signature.
	AccountSID string `yaml:"accountSid"`
	AuthToken  string `yaml:"authToken"`
	// MessagingServiceSID (MG…) sends through a Messaging Service, which
	// picks the number from its pool; From or it is required.
	MessagingServiceSID string `yaml:"messagingServiceSid"`
	// Account holds the sending number From, the REST API's base and the
	// tuning. Its PublicURL is required: each send names
	// PublicURL/providers/twilio/status as its StatusCallback, and
	// signatures are checked over this address, not over the one the
	// request arrived at, which a proxy may have rewritten.
	httpcall.Account `yaml:",inline"`
}

var (
	accountSID = regexp.MustCompile(`^AC[0-9a-fA-F]{32}$`)
	serviceSID = regexp.MustCompile(`^MG[0-9a-fA-F]{32}$`)
)

// Validate reports every problem of c at once.
func (c Config) Validate() error {
	p := httpcall.Checking(TypeName)
	switch {
	case c.AccountSID == "":
		p.Add("AccountSID", "is required")
	case !accountSID.MatchString(c.AccountSID):
		p.Add("AccountSID", "must be AC followed by 32 hex digits")
	}
	if c.AuthToken == "" {
		p.Add("AuthToken", "is required")
	}
	if c.From == "" && c.MessagingServiceSID == "" {
		p.Add("From", "or messagingServiceSid is required")
	}
	if c.MessagingServiceSID != "" && !serviceSID.MatchString(c.MessagingServiceSID) {
		p.Add("MessagingServiceSID", "must be MG followed by 32 hex digits")
	}
	if c.PublicURL == "" {
		p.Add("PublicURL", "is required: the public address Twilio calls back and signs (MSGSVC_PUBLIC_URL)")
	} else if !provider.IsURL(c.PublicURL) {
		p.Add("PublicURL", "%q is not an http(s) URL", c.PublicURL)
	}
	p.URL("APIURL", c.APIURL)
	return p.Err(c.Tuning)
}

func (c Config) withDefaults() Config {
	c.Account = c.Defaults(TypeName, DefaultAPIURL)
	return c
}
