// Package routing reads the providers and routes of a deployment: the
// configuration file (--config msgsvc.yaml) and the environment variables
// that configure one provider per channel without a file. It owns the
// file's top level (names, types, breakers, routes); each provider's own
// block is decoded and validated by its type in the provider registry. It
// validates everything before the service starts, naming the file, line
// and key of each problem; it builds nothing (internal/app builds the
// adapters).
package routing

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Config is the whole provider configuration.
type Config struct {
	// Currency is the one providers' costs are in (default USD).
	Currency  string
	Providers []Provider
	Routes    []Route
}

// Provider is one configured carrier or platform.
type Provider struct {
	Name string
	Type string
	// Settings are the adapter's own configuration, decoded from the
	// block named like its type.
	Settings provider.Settings
	// Breaker tunes the circuit breaker that fails routes over to their
	// secondary while this provider is down or refusing.
	Breaker BreakerSpec
	// Costs is what the provider charges per SMS segment (or per message
	// on other channels) by destination prefix; nil when not given.
	Costs *costs.Table

	line int
}

// BreakerSpec: after Failures consecutive failed hand-overs the provider is
// taken out of its routes for Cooldown, then one probe decides.
type BreakerSpec struct {
	Failures int           `yaml:"failures"`
	Cooldown time.Duration `yaml:"cooldown"`
}

// Route is a rule: the messages its match holds for go to its providers,
// chosen by its strategy. Primary and Secondary are the short form of a
// failover between two providers.
type Route struct {
	Name      string         `yaml:"name"`
	Order     int            `yaml:"order"`
	Channel   domain.Channel `yaml:"channel"`
	Countries []string       `yaml:"countries"`
	Prefixes  []string       `yaml:"prefixes"`
	Accounts  []string       `yaml:"accounts"`
	Senders   []string       `yaml:"senders"`
	Hours     string         `yaml:"hours"`
	Providers []string       `yaml:"providers"`
	Strategy  string         `yaml:"strategy"`
	Weights   map[string]int `yaml:"weights"`
	Window    int            `yaml:"window"`
	AllowLoss bool           `yaml:"allowLoss"`
	Primary   string         `yaml:"primary"`
	Secondary string         `yaml:"secondary"`

	line int
}

// Chain is the route's providers in order: Providers, or the primary and
// the secondary of the short form.
func (r Route) Chain() []string {
	if len(r.Providers) > 0 {
		return r.Providers
	}
	var out []string
	for _, n := range []string{r.Primary, r.Secondary} {
		if n != "" {
			out = append(out, n)
		}
	}
	return out
}

// Problem is one mistake in the configuration, where it was found.
type Problem struct {
	Source string // file name, or "environment"
	Line   int    // 0 when unknown
	Key    string // e.g. providers[1].smpp.window
	Msg    string
}

func (p Problem) Error() string {
	where := p.Source
	if p.Line > 0 {
		where = fmt.Sprintf("%s:%d", p.Source, p.Line)
	}
	if p.Key == "" {
		return where + ": " + printable(p.Msg)
	}
	return where + ": " + p.Key + ": " + printable(p.Msg)
}

// maxProblem caps what one problem says: a message may quote what it
// found in the file, and the file may be anything (a rate card pointed at
// a binary file), so what is quoted is escaped and cut short.
const maxProblem = 240

// printable escapes control and invalid bytes and cuts s to maxProblem
// bytes, so that a problem never carries a file's raw bytes to a log,
// a terminal or an answer.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		if b.Len() >= maxProblem {
			b.WriteString("…")
			break
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1, r < utf8.RuneSelf && !unicode.IsPrint(r):
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unicode.IsPrint(r):
			b.WriteRune(r)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
		i += size
	}
	return b.String()
}

// Load reads and validates a configuration file; a missing file is an
// error. ${NAME} in a value is replaced by the environment variable NAME,
// so that secrets can stay out of the file.
func Load(path string, getenv func(string) string, types *provider.Registry) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("provider configuration: %w", err)
	}
	return Parse(path, data, getenv, types)
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse reads and validates a configuration held in data; name is used in
// errors. Unknown keys and wrong types are refused first, with the line
// they are on: a typo in a key must not silently leave a setting at its
// default.
func Parse(name string, data []byte, getenv func(string) string, types *provider.Registry) (Config, error) {
	c, problems, _, err := parse(name, data, getenv, types)
	if err != nil {
		return Config{}, err
	}
	return c, errors.Join(problems...)
}

// Check is Load for `config check`, which runs where the secrets may not
// be set: each ${NAME} the environment does not set is a warning rather
// than a problem, and so is whatever else is wrong on its line (a value
// that is only a reference cannot be judged). Everything else is checked
// as Load checks it.
func Check(path string, getenv func(string) string, types *provider.Registry) (Config, []string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, nil, fmt.Errorf("provider configuration: %w", err)
	}
	c, problems, unset, err := parse(path, data, getenv, types)
	if err != nil {
		return Config{}, nil, err
	}
	var warnings []string
	for _, u := range unset {
		warnings = append(warnings, fmt.Sprintf("%s:%d: ${%s} is not set here (serve refuses to start without it)", path, u.line, u.name))
	}
	lines := map[int]bool{}
	for _, u := range unset {
		lines[u.line] = true
	}
	var kept []error
	for _, p := range problems {
		var pr Problem
		if errors.As(p, &pr) && pr.Line > 0 && lines[pr.Line] {
			continue
		}
		kept = append(kept, p)
	}
	return c, warnings, errors.Join(kept...)
}

// unsetRef is a ${NAME} that the environment does not set.
type unsetRef struct {
	name string
	line int
}

// parse reads data into a Config and lists its problems; err is a file
// that cannot be read at all (not YAML, or the wrong shape).
func parse(name string, data []byte, getenv func(string) string, types *provider.Registry) (Config, []error, []unsetRef, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Config{}, nil, nil, Problem{Source: name, Msg: yamlMessage(err)}
	}
	var problems []error
	var unset []unsetRef
	expandEnv(&root, name, getenv, &problems, &unset)
	var c Config
	if len(root.Content) > 0 {
		r := reader{source: name, types: types}
		c = r.config(root.Content[0])
		if len(r.structural) > 0 {
			return Config{}, nil, nil, errors.Join(r.structural...)
		}
		problems = append(problems, r.problems...)
	}
	for i, r := range c.Routes {
		if ch, err := domain.ParseChannel(string(r.Channel)); err == nil {
			c.Routes[i].Channel = ch // channels are case-insensitive, as in the API
		}
	}
	problems = append(problems, c.validate(name, types)...)
	if len(c.Routes) == 0 {
		// An empty file is what a truncating editor leaves behind: put in
		// use, it would take every channel's routes away at once.
		problems = append(problems, Problem{Source: name, Key: "routes",
			Msg: "the file has no routes: every live message would fail NO_ROUTE (is the file empty or cut short?)"})
	}
	return c, problems, unset, nil
}

func yamlMessage(err error) string {
	return strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n ", ""), "yaml: ")
}

func expandEnv(n *yaml.Node, name string, getenv func(string) string, problems *[]error, unset *[]unsetRef) {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
			ref := envRef.FindStringSubmatch(m)[1]
			v := getenv(ref)
			if v == "" {
				*problems = append(*problems, Problem{Source: name, Line: n.Line, Msg: m + " is not set in the environment"})
				*unset = append(*unset, unsetRef{name: ref, line: n.Line})
			}
			return v
		})
	}
	for _, c := range n.Content {
		expandEnv(c, name, getenv, problems, unset)
	}
}

// Channels lists the channels that have at least one route.
func (c Config) Channels() map[domain.Channel]bool {
	out := map[domain.Channel]bool{}
	for _, r := range c.Routes {
		out[r.Channel] = true
	}
	return out
}

// Provider finds a configured provider by name.
func (c Config) Provider(name string) (Provider, bool) {
	for _, p := range c.Providers {
		if p.Name == name {
			return p, true
		}
	}
	return Provider{}, false
}

// Unrouted lists the channels without any route, for the start-up log.
func (c Config) Unrouted() []domain.Channel {
	have := c.Channels()
	var out []domain.Channel
	for _, ch := range domain.Channels {
		if !have[ch] {
			out = append(out, ch)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
