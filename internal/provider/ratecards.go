package provider

import (
	"slices"
	"sort"

	"github.com/msgsvc/msgsvc/internal/costs"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// RateCard is a provider's rate card as operators read it: the channels
// of the routes that name the provider (a cost is per SMS segment or per
// message of those channels) and its prefixes' costs.
type RateCard struct {
	Provider string
	Channels []domain.Channel
	Costs    *costs.Table
}

// RateCards lists the providers that have a rate card, by name.
func (r *Router) RateCards() []RateCard {
	out := make([]RateCard, 0, len(r.costs))
	for name, t := range r.costs {
		rc := RateCard{Provider: name, Costs: t}
		for _, rt := range r.routes {
			for _, p := range rt.Providers {
				if p.Name() == name && !slices.Contains(rc.Channels, rt.Channel) {
					rc.Channels = append(rc.Channels, rt.Channel)
				}
			}
		}
		slices.Sort(rc.Channels)
		out = append(out, rc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Provider < out[j].Provider })
	return out
}

// RateCards are the current router's rate cards.
func (s *Switch) RateCards() []RateCard { return s.Router().RateCards() }
