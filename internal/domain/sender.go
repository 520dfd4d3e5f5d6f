package domain

import (
	"regexp"
	"strings"
)

var (
	alphaSender  = regexp.MustCompile(`^[A-Za-z0-9 ]{1,11}$`)
	hasLetter    = regexp.MustCompile(`[A-Za-z]`)
	numberSender = regexp.MustCompile(`^[0-9]{1,15}$`)
	agentSender  = regexp.MustCompile(`^[A-Za-z0-9_.@-]{1,128}$`)
)

// SenderProblem says what is wrong with the form of a sender on a channel
// ("" when nothing is): SMS takes an alphanumeric sender ID (1 to 11 of
// letters, digits and spaces, at least one letter) or a number (up to 15
// digits); WhatsApp a business number; RCS an agent id.
func SenderProblem(channel Channel, v string) string {
	switch channel {
	case SMS:
		if numberSender.MatchString(v) || alphaSender.MatchString(v) && hasLetter.MatchString(v) {
			return ""
		}
		return "must be a sender ID of 1 to 11 letters, digits and spaces with at least one letter, or a number of up to 15 digits"
	case WhatsApp:
		if numberSender.MatchString(v) {
			return ""
		}
		return "must be the business phone number, digits only"
	case RCS:
		if agentSender.MatchString(v) {
			return ""
		}
		return "must be an RCS agent id"
	}
	return "is not a sender of a known channel"
}

// SenderKey is a value as senders are compared: sender IDs and agents
// case-insensitively, numbers as their digits (already all they hold).
func SenderKey(v string) string { return strings.ToLower(v) }

// RouteSenderKey is a provider's own sender as accounts' senders are
// compared: providers are configured with numbers with or without a
// leading "+", accounts hold their digits.
func RouteSenderKey(v string) string { return SenderKey(strings.TrimPrefix(v, "+")) }

// MayUseRouteSender reports whether an account may send from a route
// provider's own sender that holders (the accounts that have it approved,
// at most one) hold: nobody's is the deployment's and everyone's; a held
// one is its holder's alone.
func MayUseRouteSender(holders []string, accountID string) bool {
	return len(holders) == 0 || holders[0] == accountID
}
