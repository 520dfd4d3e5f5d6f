// Package routing reads the providers and routes of a deployment: the
// configuration file (--config msgsvc.yaml) and the MSGSVC_SMPP_*,
// MSGSVC_WHATSAPP_* and MSGSVC_RBM_* environment variables that configure
// one provider per channel without a file. It validates everything before
// the service starts, naming the file, line and key of each problem; it
// builds nothing (internal/app turns the specs into adapters).
package routing

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"msgsvc/internal/domain"
)

// Config is the whole provider configuration.
type Config struct {
	Providers []Provider `yaml:"providers"`
	Routes    []Route    `yaml:"routes"`
}

// Provider types.
const (
	SMPP     = "smpp"
	WhatsApp = "whatsapp"
	RBM      = "rbm"
)

// Provider is one configured carrier or platform. Exactly the block of its
// type is set.
type Provider struct {
	Name     string        `yaml:"name"`
	Type     string        `yaml:"type"`
	SMPP     *SMPPSpec     `yaml:"smpp"`
	WhatsApp *WhatsAppSpec `yaml:"whatsapp"`
	RBM      *RBMSpec      `yaml:"rbm"`
	// Breaker tunes the circuit breaker that fails routes over to their
	// secondary while this provider is down or refusing.
	Breaker BreakerSpec `yaml:"breaker"`

	line int
}

// SMPPSpec is an SMSC reached over SMPP 3.4.
type SMPPSpec struct {
	Addr       string        `yaml:"addr"`
	SystemID   string        `yaml:"systemId"`
	Password   string        `yaml:"password"`
	SystemType string        `yaml:"systemType"`
	Binds      int           `yaml:"binds"`
	Window     int           `yaml:"window"`
	TPS        int           `yaml:"tps"`
	SourceAddr string        `yaml:"sourceAddr"`
	GSMPacking string        `yaml:"gsmPacking"`
	Timeout    time.Duration `yaml:"timeout"`
}

// WhatsAppSpec is the WhatsApp Business Cloud API.
type WhatsAppSpec struct {
	Token         string `yaml:"token"`
	PhoneNumberID string `yaml:"phoneNumberId"`
	AppSecret     string `yaml:"appSecret"`
	VerifyToken   string `yaml:"verifyToken"`
	APIURL        string `yaml:"apiUrl"`
	RatePerSecond int    `yaml:"ratePerSecond"`
	// Timeout bounds one request to the platform (default 10s).
	Timeout time.Duration `yaml:"timeout"`
	// CTAURLButtons sends url buttons as the platform's call-to-action
	// message instead of as text (whatsapp.Config.CTAURLButtons).
	CTAURLButtons bool `yaml:"ctaUrlButtons"`
}

// RBMSpec is Google's RCS Business Messaging API.
type RBMSpec struct {
	AgentID       string `yaml:"agentId"`
	Credentials   string `yaml:"credentials"` // path of the service-account JSON
	APIURL        string `yaml:"apiUrl"`
	ClientToken   string `yaml:"clientToken"`
	RatePerSecond int    `yaml:"ratePerSecond"`
	// FallbackAfter is how long a message with an SMS fallback may stay
	// undelivered before it is taken back and sent as SMS (0: 10m).
	FallbackAfter time.Duration `yaml:"fallbackAfter"`
	// Timeout bounds each request to the platform (0: 10s).
	Timeout time.Duration `yaml:"timeout"`
}

// BreakerSpec: after Failures consecutive failed hand-overs the provider is
// taken out of its routes for Cooldown, then one probe decides.
type BreakerSpec struct {
	Failures int           `yaml:"failures"`
	Cooldown time.Duration `yaml:"cooldown"`
}

// Route sends a channel's messages to a destination's calling codes (none:
// every destination) through Primary, or Secondary while Primary is down.
type Route struct {
	Channel   domain.Channel `yaml:"channel"`
	Countries []string       `yaml:"countries"`
	Primary   string         `yaml:"primary"`
	Secondary string         `yaml:"secondary"`

	line int
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
		return where + ": " + p.Msg
	}
	return where + ": " + p.Key + ": " + p.Msg
}

// Load reads and validates a configuration file; a missing file is an
// error. ${NAME} in a value is replaced by the environment variable NAME,
// so that secrets can stay out of the file.
func Load(path string, getenv func(string) string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("provider configuration: %w", err)
	}
	return Parse(path, data, getenv)
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// Parse reads and validates a configuration held in data; name is used in
// errors.
func Parse(name string, data []byte, getenv func(string) string) (Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return Config{}, Problem{Source: name, Msg: yamlMessage(err)}
	}
	// Unknown keys and wrong types first, on the text as written so that
	// the line numbers are the file's: a typo in a key must not silently
	// leave a setting at its default.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var probe Config
	if err := dec.Decode(&probe); err != nil && !errors.Is(err, io.EOF) {
		return Config{}, Problem{Source: name, Msg: yamlMessage(err)}
	}
	var problems []error
	expandEnv(&root, name, getenv, &problems)
	var c Config
	if len(root.Content) > 0 {
		if err := root.Content[0].Decode(&c); err != nil {
			return Config{}, Problem{Source: name, Msg: yamlMessage(err)}
		}
		recordLines(root.Content[0], &c)
	}
	for i, r := range c.Routes {
		if ch, err := domain.ParseChannel(string(r.Channel)); err == nil {
			c.Routes[i].Channel = ch // channels are case-insensitive, as in the API
		}
	}
	problems = append(problems, c.validate(name)...)
	return c, errors.Join(problems...)
}

func yamlMessage(err error) string {
	return strings.TrimPrefix(strings.ReplaceAll(err.Error(), "\n ", ""), "yaml: ")
}

func expandEnv(n *yaml.Node, name string, getenv func(string) string, problems *[]error) {
	if n.Kind == yaml.ScalarNode && strings.Contains(n.Value, "${") {
		n.Value = envRef.ReplaceAllStringFunc(n.Value, func(m string) string {
			v := getenv(envRef.FindStringSubmatch(m)[1])
			if v == "" {
				*problems = append(*problems, Problem{Source: name, Line: n.Line, Msg: m + " is not set in the environment"})
			}
			return v
		})
	}
	for _, c := range n.Content {
		expandEnv(c, name, getenv, problems)
	}
}

// recordLines remembers where each provider and route was written.
func recordLines(root *yaml.Node, c *Config) {
	for i := 0; i+1 < len(root.Content); i += 2 {
		key, val := root.Content[i].Value, root.Content[i+1]
		for j, item := range val.Content {
			switch {
			case key == "providers" && j < len(c.Providers):
				c.Providers[j].line = item.Line
			case key == "routes" && j < len(c.Routes):
				c.Routes[j].line = item.Line
			}
		}
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
