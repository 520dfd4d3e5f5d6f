package routing

import (
	"fmt"
	"regexp"
	"strconv"

	"msgsvc/internal/domain"
	"msgsvc/internal/provider"
)

var nameRe = regexp.MustCompile(`^[a-z][a-z0-9_-]{0,31}$`)

// validate checks what routing owns: provider names, breakers and routes.
// Each provider's own block was checked by its type when it was read.
func (c Config) validate(source string, types *provider.Registry) []error {
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
		if p.Breaker.Failures < 0 || p.Breaker.Cooldown < 0 {
			add(p.line, key+".breaker", "failures and cooldown must not be negative")
		}
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
			if !ok {
				add(r.line, key+"."+ref.field, "no provider is named %q", ref.name)
				continue
			}
			if t, known := types.Type(p.Type); known && t.Channel != r.Channel {
				add(r.line, key+"."+ref.field, "provider %q (%s) does not carry %s", ref.name, p.Type, r.Channel)
			}
		}
		if r.Secondary != "" && r.Secondary == r.Primary {
			add(r.line, key+".secondary", "is the primary itself")
		}
	}
	return out
}
