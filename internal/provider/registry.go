package provider

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
)

// Adapter is a provider as the service runs it: built from its
// configuration, started before the first Submit, asked for its health by
// /readyz, stopped at shutdown. Start and Stop may be called more than
// once; the calls after the first do nothing. Stop returns promptly (it
// gives up when ctx ends).
type Adapter interface {
	Provider
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
	Health() Health
}

// Health is what /readyz shows of an adapter: Ready when it can hand
// messages over now, and a line an operator can act on.
type Health struct {
	Ready  bool
	Detail string
}

// Settings is an adapter's own configuration, as its package defines it.
type Settings interface {
	// Validate reports every problem at once; each is a *FieldError when
	// it concerns one setting, so that the file's key can be named.
	Validate() error
}

// OwnSender is implemented by the settings of a provider that sends from a
// sender of its own when a message names none: the SMPP sourceAddr, the
// HTTP providers' from number, the WhatsApp business number, the RBM
// agent. An account may hold that value as an approved sender, and then
// no other account's message may go out from it.
type OwnSender interface {
	// OwnSender is that sender, "" when there is none (the platform
	// picks one, as from a pool).
	OwnSender() string
}

// OnlyOwnSender is implemented by the settings of a provider that sends
// every message from its own sender, even one that names another (a
// WhatsApp provider is one business number).
type OnlyOwnSender interface {
	OnlyOwnSender() bool
}

// OwnSenderOf is the own sender of a provider's settings ("" for none),
// and whether the provider sends every message from it.
func OwnSenderOf(s Settings) (sender string, only bool) {
	if o, ok := s.(OwnSender); ok {
		sender = o.OwnSender()
	}
	if o, ok := s.(OnlyOwnSender); ok {
		only = o.OnlyOwnSender()
	}
	return sender, only
}

// FieldError is a problem with one setting of an adapter's configuration.
type FieldError struct {
	Type  string // the provider type, e.g. "smpp"
	Field string // the Go field of the adapter's configuration
	Msg   string
}

func (e *FieldError) Error() string { return e.Type + " config: " + e.Field + " " + e.Msg }

// Files are the accounts' uploaded media, which adapters send onwards
// (media.Store implements it).
type Files interface {
	Lookup(ctx context.Context, accountID, mediaID string) (media.Item, error)
	Open(ctx context.Context, it media.Item) (*os.File, error)
}

// MediaCache remembers the platform's id of each file uploaded to it, per
// scope, beyond this process (store.Store keeps it in storage).
type MediaCache interface {
	PlatformMedia(ctx context.Context, scope, sha256 string, since time.Time) (id string, found bool, err error)
	SavePlatformMedia(ctx context.Context, scope, sha256, platformID string, at time.Time) error
}

// Deps are what the service gives every adapter it builds. Sink is
// required; a nil field otherwise takes the adapter's own default (no
// media, a fresh HTTP client, time.Now, slog.Default()).
type Deps struct {
	Sink Sink
	// Metrics is where the adapter registers its collectors.
	Metrics prometheus.Registerer
	Files   Files
	Cache   MediaCache
	HTTP    *http.Client
	Now     func() time.Time
	Log     *slog.Logger
	// Version is msgsvc's version, for a User-Agent.
	Version string
}

// Type is one kind of adapter: the name the configuration file and the
// routes use, the channels it carries, and how it is read and built. What
// an adapter can do beyond Submit is not declared here: it is the
// capability interfaces the adapter implements (CapabilitiesOf), which
// each adapter package guards at compile time. Define makes one from an
// adapter's own configuration type.
type Type struct {
	Name string
	// Channels are the channels an adapter of this type carries.
	Channels []domain.Channel
	// Webhooks are where the type's platform calls back, under
	// /providers/<Name>/; OpenAPI describes them for the published
	// document: a JSON object of OpenAPI path items keyed by their public
	// paths, in the order they are published.
	Webhooks []WebhookRoute
	OpenAPI  []byte

	decode func(decode func(into any) error) (Settings, error)
	env    func(getenv func(string) string) (Settings, bool, error)
	build  func(ctx context.Context, name string, s Settings, d Deps) (Adapter, error)
}

// Spec describes an adapter type whose configuration is C.
type Spec[C Settings] struct {
	Name     string
	Channels []domain.Channel
	// Webhooks and OpenAPI are the type's webhook routes (made with
	// Receive) and their OpenAPI path items; the registry refuses a type
	// whose two disagree.
	Webhooks []WebhookRoute
	OpenAPI  []byte
	// Decode reads the provider's block of the configuration file and
	// validates it; decode fills a value from the block (unknown keys are
	// refused). Nil decodes into a zero C, whose yaml tags name the keys,
	// and calls its Validate.
	Decode func(decode func(into any) error) (C, error)
	// Env reads the environment shortcut (MSGSVC_<TYPE>_*): ok is false
	// when its variables are not set.
	Env func(getenv func(string) string) (c C, ok bool, err error)
	// New builds an adapter named name from a validated configuration.
	New func(ctx context.Context, name string, c C, d Deps) (Adapter, error)
}

// Define makes the Type of an adapter package from its Spec.
func Define[C Settings](s Spec[C]) Type {
	t := Type{Name: s.Name, Channels: slices.Clone(s.Channels), Webhooks: slices.Clone(s.Webhooks), OpenAPI: slices.Clone(s.OpenAPI)}
	t.decode = func(decode func(any) error) (Settings, error) {
		if s.Decode != nil {
			return s.Decode(decode)
		}
		var c C
		if err := decode(&c); err != nil {
			return c, err
		}
		return c, c.Validate()
	}
	t.env = func(getenv func(string) string) (Settings, bool, error) {
		if s.Env == nil {
			return nil, false, nil
		}
		c, ok, err := s.Env(getenv)
		if !ok || err != nil {
			return nil, ok, err
		}
		return c, true, c.Validate()
	}
	t.build = func(ctx context.Context, name string, cfg Settings, d Deps) (Adapter, error) {
		c, ok := cfg.(C)
		if !ok {
			return nil, fmt.Errorf("provider %s: configuration %T is not for type %s", name, cfg, s.Name)
		}
		if d.Sink == nil {
			return nil, fmt.Errorf("provider %s: no Sink for its reports", name)
		}
		return s.New(ctx, name, c, d)
	}
	return t
}

// Decode reads a provider's block of the configuration file into the
// type's configuration and validates it: the settings are returned even
// when invalid, so that problems can be named by key.
func (t Type) Decode(decode func(into any) error) (Settings, error) { return t.decode(decode) }

// FromEnv reads the type's environment shortcut; ok is false when it is
// not set.
func (t Type) FromEnv(getenv func(string) string) (s Settings, ok bool, err error) {
	return t.env(getenv)
}

// Build makes an adapter named name.
func (t Type) Build(ctx context.Context, name string, s Settings, d Deps) (Adapter, error) {
	return t.build(ctx, name, s, d)
}

// Registry holds the adapter types this build can run, in the order they
// were registered. It is a value the service builds at start, not a global.
type Registry struct {
	types []Type
}

// NewRegistry registers types; two of one name are an error.
func NewRegistry(types ...Type) (*Registry, error) {
	r := &Registry{}
	for _, t := range types {
		if err := r.Add(t); err != nil {
			return nil, err
		}
	}
	return r, nil
}

// Add registers one more type.
func (r *Registry) Add(t Type) error {
	switch {
	case t.Name == "" || t.build == nil:
		return errors.New("provider type without a name or made without Define")
	case len(t.Channels) == 0:
		return fmt.Errorf("provider type %q carries no channel", t.Name)
	case t.Name == "simulator":
		return errors.New(`provider type "simulator": the built-in simulator's name`)
	}
	if err := t.checkRoutes(); err != nil {
		return err
	}
	if _, dup := r.Type(t.Name); dup {
		return fmt.Errorf("provider type %q registered twice", t.Name)
	}
	r.types = append(r.types, t)
	return nil
}

// Type finds a registered type.
func (r *Registry) Type(name string) (Type, bool) {
	for _, t := range r.types {
		if t.Name == name {
			return t, true
		}
	}
	return Type{}, false
}

// Carries reports whether an adapter of type t carries channel ch.
func (t Type) Carries(ch domain.Channel) bool { return slices.Contains(t.Channels, ch) }

// Types lists the registered types, in the order they were registered.
func (r *Registry) Types() []Type { return slices.Clone(r.types) }

// Names lists the registered type names, in the order they were
// registered.
func (r *Registry) Names() []string {
	out := make([]string, len(r.types))
	for i, t := range r.types {
		out[i] = t.Name
	}
	return out
}

// Options are an adapter package's options (of type O) for what d sets of
// a logger, a clock and an HTTP client, which logger, clock and client
// make (nil: the package takes none of that kind).
func Options[O any](d Deps, logger func(*slog.Logger) O, clock func(func() time.Time) O, client func(*http.Client) O) []O {
	var opts []O
	if d.Log != nil && logger != nil {
		opts = append(opts, logger(d.Log))
	}
	if d.Now != nil && clock != nil {
		opts = append(opts, clock(d.Now))
	}
	if d.HTTP != nil && client != nil {
		opts = append(opts, client(d.HTTP))
	}
	return opts
}

// Collect registers an adapter's collector where d says, when it says.
func (d Deps) Collect(c prometheus.Collector) error {
	if d.Metrics == nil {
		return nil
	}
	if err := d.Metrics.Register(c); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	return nil
}
