package routing

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"

	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
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
	named := map[string]int{}
	for i, r := range c.Routes {
		key := fmt.Sprintf("routes[%d]", i)
		if first, twice := named[r.Name]; twice && r.Name != "" {
			add(r.line, key+".name", "route %q is named twice (also routes[%d])", r.Name, first)
		} else {
			named[r.Name] = i
		}
		out = append(out, c.validateRoute(source, key, r, types)...)
	}
	if c.Currency != "" && !currencyRe.MatchString(c.Currency) {
		out = append(out, Problem{Source: source, Key: "currency", Msg: fmt.Sprintf("%q is not a currency code such as USD", c.Currency)})
	}
	return out
}

var currencyRe = regexp.MustCompile(`^[A-Z]{3}$`)

// validateRoute checks one route: its match, its providers and its
// strategy's settings.
func (c Config) validateRoute(source, key string, r Route, types *provider.Registry) []error {
	var out []error
	add := func(k, format string, args ...any) {
		out = append(out, Problem{Source: source, Line: r.line, Key: key + k, Msg: fmt.Sprintf(format, args...)})
	}
	if _, err := domain.ParseChannel(string(r.Channel)); err != nil {
		add(".channel", "must be SMS, WHATSAPP or RCS")
	}
	if r.Name != "" && !nameRe.MatchString(r.Name) {
		add(".name", "%q must be 1 to 32 of a-z, 0-9, _ and -, starting with a letter", r.Name)
	}
	for j, cc := range r.Countries {
		if n, err := strconv.Atoi(cc); err != nil || n < 1 || n > 999 || cc[0] == '0' {
			add(fmt.Sprintf(".countries[%d]", j), "%q is not a calling code (1 to 3 digits, e.g. 44)", cc)
		}
	}
	for j, p := range r.Prefixes {
		if err := (&costs.Table{}).Add(p, 0); err != nil || p[0] == '0' {
			add(fmt.Sprintf(".prefixes[%d]", j), "%q is not a destination prefix (digits of the number in international form, e.g. 447)", p)
		}
	}
	if len(r.Countries) > 0 && len(r.Prefixes) > 0 {
		add(".prefixes", "give countries or prefixes, not both")
	}
	if _, err := provider.ParseHours(r.Hours); err != nil {
		add(".hours", "%v", err)
	}
	out = append(out, c.validateChain(source, key, r, types)...)
	return out
}

func (c Config) validateChain(source, key string, r Route, types *provider.Registry) []error {
	var out []error
	add := func(k, format string, args ...any) {
		out = append(out, Problem{Source: source, Line: r.line, Key: key + k, Msg: fmt.Sprintf(format, args...)})
	}
	short := r.Primary != "" || r.Secondary != ""
	switch {
	case short && len(r.Providers) > 0:
		add(".providers", "give providers or primary and secondary, not both")
	case !short && len(r.Providers) == 0:
		add(".providers", "is required (or primary)")
	case short && r.Primary == "":
		add(".primary", "is required")
	case r.Secondary != "" && r.Secondary == r.Primary:
		add(".secondary", "is the primary itself")
	}
	field := func(j int) string {
		if short {
			return []string{".primary", ".secondary"}[min(j, 1)]
		}
		return fmt.Sprintf(".providers[%d]", j)
	}
	seen := map[string]bool{}
	for j, name := range r.Chain() {
		p, ok := c.Provider(name)
		switch {
		case !ok:
			add(field(j), "no provider is named %q", name)
		case seen[name]:
			add(field(j), "%q is named twice", name)
		default:
			if t, known := types.Type(p.Type); known && !t.Carries(r.Channel) {
				add(field(j), "provider %q (%s) does not carry %s", name, p.Type, r.Channel)
			}
		}
		seen[name] = true
	}
	strategy := provider.Strategy(r.Strategy)
	if r.Strategy != "" && !slices.Contains(provider.Strategies, strategy) {
		add(".strategy", "%q is not one of failover, least-cost, weighted, quality", r.Strategy)
	}
	for name, w := range r.Weights {
		if !seen[name] {
			add(".weights."+name, "is not one of the route's providers")
		} else if w < 0 {
			add(".weights."+name, "must not be negative")
		}
	}
	if strategy == provider.Weighted && len(r.Weights) == 0 {
		add(".weights", "is required by the weighted strategy")
	} else if strategy == provider.Weighted && allZero(r.Weights) {
		add(".weights", "%sgives every provider a weight of 0: it would send nothing", routeName(r))
	}
	if strategy != provider.Weighted && len(r.Weights) > 0 {
		add(".weights", "is only for the weighted strategy")
	}
	if r.Window < 0 || r.Window > 100_000 {
		add(".window", "must be 1 to 100000 final statuses")
	}
	if r.Window != 0 && strategy != provider.Quality {
		add(".window", "is only for the quality strategy")
	}
	return out
}

func allZero(weights map[string]int) bool {
	for _, w := range weights {
		if w != 0 {
			return false
		}
	}
	return true
}

// routeName is how a problem names a route that has a name.
func routeName(r Route) string {
	if r.Name == "" {
		return ""
	}
	return fmt.Sprintf("route %q ", r.Name)
}

// CheckAccounts checks the accounts that routes are limited to against
// known, which says whether an account id exists. Each unknown id is a
// problem naming its route: a typo there would silently leave the route
// unused.
func (c Config) CheckAccounts(source string, known func(id string) (bool, error)) error {
	var out []error
	for i, r := range c.Routes {
		for j, id := range r.Accounts {
			ok, err := known(id)
			if err != nil {
				return fmt.Errorf("check the accounts of the routes: %w", err)
			}
			if !ok {
				out = append(out, Problem{Source: source, Line: r.line, Key: fmt.Sprintf("routes[%d].accounts[%d]", i, j),
					Msg: fmt.Sprintf("%sno account has the id %q", routeName(r), id)})
			}
		}
	}
	return errors.Join(out...)
}
