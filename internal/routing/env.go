package routing

import (
	"errors"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// FromEnv adds the providers that environment variables configure, one per
// registered type: each type reads its own variables (MSGSVC_SMPP_ADDR
// makes provider "smpp" for SMS, MSGSVC_WHATSAPP_TOKEN provider
// "whatsapp", MSGSVC_RBM_AGENT_ID provider "rbm"), and the provider is
// named like its type. Each gets a route for every destination of its
// channel unless the file already routes that channel; a second provider
// of a channel so configured (SMPP and Twilio) becomes that route's
// secondary, in the order the types are registered, and a third is left
// for the file to route.
func FromEnv(c Config, getenv func(string) string, types *provider.Registry) (Config, error) {
	var problems []error
	routed := c.Channels()
	added := map[domain.Channel]int{} // the route the environment added, by channel
	for _, t := range types.Types() {
		settings, ok, err := t.FromEnv(getenv)
		if !ok {
			continue
		}
		problems = append(problems, settingProblems("environment", 0, t.Name, settings, err)...)
		if _, clash := c.Provider(t.Name); clash {
			problems = append(problems, Problem{Source: "environment",
				Msg: "the file already has a provider named \"" + t.Name + "\"; remove it or the environment variables"})
			continue
		}
		c.Providers = append(c.Providers, Provider{Name: t.Name, Type: t.Name, Settings: settings})
		for _, ch := range t.Channels {
			if routed[ch] {
				continue
			}
			if i, ok := added[ch]; ok {
				if c.Routes[i].Secondary == "" {
					c.Routes[i].Secondary = t.Name
				}
				continue
			}
			added[ch] = len(c.Routes)
			c.Routes = append(c.Routes, Route{Channel: ch, Primary: t.Name})
		}
	}
	problems = append(problems, c.validate("environment", types)...)
	return c, errors.Join(problems...)
}

// Empty reports whether nothing is configured.
func (c Config) Empty() bool { return len(c.Providers) == 0 && len(c.Routes) == 0 }
