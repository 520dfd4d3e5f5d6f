package routing

import (
	"errors"
	"fmt"
	"strconv"
	"time"
)

// FromEnv adds the providers that environment variables configure, one per
// channel (CONTRACT section 6), to c: MSGSVC_SMPP_ADDR makes provider
// "smpp" for SMS, MSGSVC_WHATSAPP_TOKEN provider "whatsapp", and
// MSGSVC_RBM_AGENT_ID provider "rbm". Each gets a route for every
// destination of its channel unless the file already routes that channel.
func FromEnv(c Config, getenv func(string) string) (Config, error) {
	var problems []error
	bad := func(key, format string, args ...any) {
		problems = append(problems, Problem{Source: "environment", Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	num := func(key string, def int) int {
		v := getenv(key)
		if v == "" {
			return def
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			bad(key, "%q is not a whole number", v)
		}
		return n
	}
	dur := func(key string) time.Duration {
		v := getenv(key)
		if v == "" {
			return 0
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			bad(key, "%q is not a duration (e.g. 10m)", v)
		}
		return d
	}
	var add []Provider
	if addr := getenv("MSGSVC_SMPP_ADDR"); addr != "" {
		add = append(add, Provider{Name: "smpp", Type: SMPP, SMPP: &SMPPSpec{Addr: addr, SystemID: getenv("MSGSVC_SMPP_SYSTEM_ID"),
			Password: getenv("MSGSVC_SMPP_PASSWORD"), SystemType: getenv("MSGSVC_SMPP_SYSTEM_TYPE"),
			Binds: num("MSGSVC_SMPP_BINDS", 1), Window: num("MSGSVC_SMPP_WINDOW", 10), TPS: num("MSGSVC_SMPP_TPS", 0),
			SourceAddr: getenv("MSGSVC_SMPP_SOURCE_ADDR")}})
	}
	if tok := getenv("MSGSVC_WHATSAPP_TOKEN"); tok != "" {
		add = append(add, Provider{Name: "whatsapp", Type: WhatsApp, WhatsApp: &WhatsAppSpec{Token: tok,
			PhoneNumberID: getenv("MSGSVC_WHATSAPP_PHONE_NUMBER_ID"), AppSecret: getenv("MSGSVC_WHATSAPP_APP_SECRET"),
			VerifyToken: getenv("MSGSVC_WHATSAPP_VERIFY_TOKEN"), APIURL: getenv("MSGSVC_WHATSAPP_API_URL")}})
	}
	if agent := getenv("MSGSVC_RBM_AGENT_ID"); agent != "" {
		add = append(add, Provider{Name: "rbm", Type: RBM, RBM: &RBMSpec{AgentID: agent,
			Credentials: getenv("MSGSVC_RBM_CREDENTIALS"), APIURL: getenv("MSGSVC_RBM_API_URL"),
			ClientToken: getenv("MSGSVC_RBM_CLIENT_TOKEN"), RatePerSecond: num("MSGSVC_RBM_RATE_PER_SECOND", 0),
			FallbackAfter: dur("MSGSVC_RBM_FALLBACK_AFTER")}})
	}
	routed := c.Channels()
	for _, p := range add {
		if _, clash := c.Provider(p.Name); clash {
			bad("", "the file already has a provider named %q; remove it or the environment variables", p.Name)
			continue
		}
		c.Providers = append(c.Providers, p)
		if ch := channelOf[p.Type]; !routed[ch] {
			c.Routes = append(c.Routes, Route{Channel: ch, Primary: p.Name})
		}
	}
	problems = append(problems, c.validate("environment")...)
	return c, errors.Join(problems...)
}

// Empty reports whether nothing is configured.
func (c Config) Empty() bool { return len(c.Providers) == 0 && len(c.Routes) == 0 }
