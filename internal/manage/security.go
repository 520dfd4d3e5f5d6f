package manage

import (
	"context"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

// SecurityStore is what changing an account's allow-list, settings and webhook secret needs from storage.
type SecurityStore interface {
	UpdateAccountSettings(ctx context.Context, accountID string, allowlist []string, rcsFallback bool, waTier int) error
	RotateSecret(ctx context.Context, accountID, next string, at time.Time) error
}

// maxAllowlist bounds the IP allow-list: it is checked on every request.
const maxAllowlist = 100

// Allowlist returns an account's IP allow-list (empty: no restriction).
func (s *Service) Allowlist(ctx context.Context, a Actor, accountID string) ([]string, error) {
	acct, err := s.account(ctx, a, accountID, user.Viewer)
	if err != nil {
		return nil, err
	}
	return nonNil(acct.IPAllowlist), nil
}

// SetAllowlist replaces an account's IP allow-list with addresses and CIDR
// ranges (IPv4 or IPv6), written canonically and without repeats; an empty
// list lifts the restriction. It guards the integration API only, so an
// admin cannot lock themselves out of the panel with it.
func (s *Service) SetAllowlist(ctx context.Context, a Actor, accountID string, entries []string) ([]string, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return nil, err
	}
	list, err := ParseAllowlist(entries)
	if err != nil {
		return nil, err
	}
	if err := s.st.UpdateAccountSettings(ctx, acct.ID, list, acct.RCSFallback, acct.WAQualityTier); err != nil {
		return nil, err
	}
	return list, nil
}

// ParseAllowlist checks allow-list entries and writes them canonically
// ("2001:DB8::/32" becomes "2001:db8::/32", a range's host bits are
// cleared); an invalid entry is a validation error naming entries[i].
func ParseAllowlist(entries []string) ([]string, error) {
	var p problems
	out := []string{}
	seen := map[string]bool{}
	if len(entries) > maxAllowlist {
		p.add("entries", "may hold at most "+strconv.Itoa(maxAllowlist)+" addresses and ranges")
	}
	for i, e := range entries {
		e = strings.TrimSpace(e)
		canon := ""
		if pr, err := netip.ParsePrefix(e); err == nil {
			canon = netip.PrefixFrom(pr.Addr().Unmap(), pr.Bits()).Masked().String()
			if pr.Addr().Is4In6() {
				canon = pr.Masked().String()
			}
		} else if ad, err := netip.ParseAddr(e); err == nil && ad.Zone() == "" {
			canon = ad.Unmap().String()
		} else {
			p.add("entries["+strconv.Itoa(i)+"]", "is neither an IPv4 or IPv6 address nor a CIDR range (e.g. 203.0.113.7, 198.51.100.0/24, 2001:db8::/32)")
			continue
		}
		if !seen[canon] {
			seen[canon] = true
			out = append(out, canon)
		}
	}
	if err := p.err("The allow-list is not valid."); err != nil {
		return nil, err
	}
	return out, nil
}

// Secret is an account's webhook signing secret and, during a rotation,
// the previous one, which keeps signing until PreviousValidUntil.
type Secret struct {
	Current            string
	Previous           string
	PreviousValidUntil time.Time
}

// WebhookSecret reveals an account's signing secret.
func (s *Service) WebhookSecret(ctx context.Context, a Actor, accountID string) (Secret, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return Secret{}, err
	}
	return secretOf(acct, s.now()), nil
}

func secretOf(acct domain.Account, now time.Time) Secret {
	out := Secret{Current: acct.WebhookSecret}
	if until := acct.SecretRotatedAt.Add(webhook.RotationGrace); acct.WebhookSecretPrev != "" && now.Before(until) {
		out.Previous, out.PreviousValidUntil = acct.WebhookSecretPrev, until
	}
	return out
}

// RotateSecret gives the account a new signing secret; for the next 24
// hours every webhook carries both signatures, space-separated.
func (s *Service) RotateSecret(ctx context.Context, a Actor, accountID string) (Secret, error) {
	acct, err := s.account(ctx, a, accountID, user.Admin)
	if err != nil {
		return Secret{}, err
	}
	next, err := webhook.NewSecret()
	if err != nil {
		return Secret{}, err
	}
	now := s.now().UTC()
	if err := s.st.RotateSecret(ctx, acct.ID, next, now); err != nil {
		return Secret{}, err
	}
	return Secret{Current: next, Previous: acct.WebhookSecret, PreviousValidUntil: now.Add(webhook.RotationGrace)}, nil
}

func nonNil[T any](v []T) []T {
	if v == nil {
		return []T{}
	}
	return v
}
