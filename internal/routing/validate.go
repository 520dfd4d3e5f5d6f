package routing

import (
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"

	"msgsvc/internal/domain"
)

var nameRe = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// channelOf is the channel each provider type carries.
var channelOf = map[string]domain.Channel{SMPP: domain.SMS, WhatsApp: domain.WhatsApp, RBM: domain.RCS}

func (c Config) validate(source string) []error {
	var out []error
	add := func(line int, key, format string, args ...any) {
		out = append(out, Problem{Source: source, Line: line, Key: key, Msg: fmt.Sprintf(format, args...)})
	}
	seen := map[string]bool{}
	for i, p := range c.Providers {
		key := fmt.Sprintf("providers[%d]", i)
		switch {
		case !nameRe.MatchString(p.Name):
			add(p.line, key+".name", "%q must be 1 to 32 of a-z, 0-9, _ and -, starting with a letter", p.Name)
		case p.Name == "simulator":
			add(p.line, key+".name", `"simulator" is the built-in simulator's name`)
		case seen[p.Name]:
			add(p.line, key+".name", "%q is used twice", p.Name)
		}
		seen[p.Name] = true
		out = append(out, p.validate(source, key)...)
	}
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		if _, err := domain.ParseChannel(string(r.Channel)); err != nil {
			add(r.line, key+".channel", "must be SMS, WHATSAPP or RCS")
		}
		for j, cc := range r.Countries {
			if n, err := strconv.Atoi(cc); err != nil || n < 1 || n > 999 || cc[0] == '0' {
				add(r.line, fmt.Sprintf("%s.countries[%d]", key, j), "%q is not a calling code (1 to 3 digits, e.g. 44)", cc)
			}
		}
		for _, ref := range []struct{ field, name string }{{"primary", r.Primary}, {"secondary", r.Secondary}} {
			if ref.name == "" {
				if ref.field == "primary" {
					add(r.line, key+".primary", "is required")
				}
				continue
			}
			p, ok := c.Provider(ref.name)
			switch {
			case !ok:
				add(r.line, key+"."+ref.field, "no provider is named %q", ref.name)
			case channelOf[p.Type] != r.Channel:
				add(r.line, key+"."+ref.field, "provider %q (%s) does not carry %s", ref.name, p.Type, r.Channel)
			}
		}
		if r.Secondary != "" && r.Secondary == r.Primary {
			add(r.line, key+".secondary", "is the primary itself")
		}
	}
	return out
}

func (p Provider) validate(source, key string) []error {
	var out []error
	add := func(k, format string, args ...any) {
		out = append(out, Problem{Source: source, Line: p.line, Key: key + k, Msg: fmt.Sprintf(format, args...)})
	}
	blocks := 0
	for _, set := range []bool{p.SMPP != nil, p.WhatsApp != nil, p.RBM != nil} {
		if set {
			blocks++
		}
	}
	if blocks > 1 {
		add("", "give only the block of its type")
	}
	switch p.Type {
	case SMPP:
		if p.SMPP == nil {
			add(".smpp", "is required for type smpp")
			return out
		}
		s := p.SMPP
		if _, _, err := net.SplitHostPort(s.Addr); err != nil {
			add(".smpp.addr", "must be host:port")
		}
		if s.SystemID == "" {
			add(".smpp.systemId", "is required")
		}
		if s.Binds < 0 || s.Binds > 32 {
			add(".smpp.binds", "must be 1 to 32 (0: 1)")
		}
		if s.Window < 0 || s.Window > 1000 {
			add(".smpp.window", "must be 1 to 1000 (0: 10)")
		}
		if s.TPS < 0 {
			add(".smpp.tps", "must be 0 (unlimited) or more")
		}
		if s.GSMPacking != "" && s.GSMPacking != "unpacked" && s.GSMPacking != "packed" {
			add(".smpp.gsmPacking", "must be unpacked or packed")
		}
	case WhatsApp:
		if p.WhatsApp == nil {
			add(".whatsapp", "is required for type whatsapp")
			return out
		}
		w := p.WhatsApp
		for _, f := range []struct{ k, v string }{{"token", w.Token}, {"phoneNumberId", w.PhoneNumberID},
			{"appSecret", w.AppSecret}, {"verifyToken", w.VerifyToken}} {
			if f.v == "" {
				add(".whatsapp."+f.k, "is required")
			}
		}
		if w.PhoneNumberID != "" && strings.Trim(w.PhoneNumberID, "0123456789") != "" {
			add(".whatsapp.phoneNumberId", "must be the platform's numeric id of the phone number (WhatsApp Manager, API setup), not the number")
		}
		if w.RatePerSecond < 0 {
			add(".whatsapp.ratePerSecond", "must be 0 (the platform's default, 80) or more")
		}
		if w.Timeout < 0 {
			add(".whatsapp.timeout", "must not be negative")
		}
	case RBM:
		if p.RBM == nil {
			add(".rbm", "is required for type rbm")
			return out
		}
		if p.RBM.AgentID == "" {
			add(".rbm.agentId", "is required")
		}
		if p.RBM.Credentials == "" {
			add(".rbm.credentials", "is required: the path of the service-account JSON")
		}
		if p.RBM.ClientToken == "" {
			add(".rbm.clientToken", "is required: it verifies the platform's webhook signatures")
		}
		if p.RBM.RatePerSecond < 0 {
			add(".rbm.ratePerSecond", "must be 0 (no cap) or more")
		}
		if p.RBM.FallbackAfter < 0 || p.RBM.Timeout < 0 {
			add(".rbm", "fallbackAfter and timeout must not be negative")
		}
	default:
		add(".type", "%q is not a provider type: smpp, whatsapp or rbm", p.Type)
	}
	if p.Breaker.Failures < 0 || p.Breaker.Cooldown < 0 {
		add(".breaker", "failures and cooldown must not be negative")
	}
	return out
}
