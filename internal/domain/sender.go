package domain

import (
	"fmt"
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

// RequestedSenderProblem is SenderProblem for a sender an account asks
// for, with the rules that keep a value from being a twin of another
// account's that a person (or a handset) cannot tell apart: a sender ID
// neither begins nor ends with a space nor has two in a row, and a number
// is its digits, country code first, without a "00" international prefix
// or a national leading 0. Values approved before these rules keep
// working; SenderKey compares them in their canonical form.
func RequestedSenderProblem(channel Channel, v string) string {
	if msg := SenderProblem(channel, v); msg != "" {
		return msg
	}
	switch {
	case channel == RCS:
	case numberSender.MatchString(v):
		if v[0] == '0' {
			return "must be written as digits, country code first, without a 00 prefix or a leading 0 (e.g. 15550001111)"
		}
	case strings.TrimSpace(v) != v:
		return fmt.Sprintf("must not begin or end with a space (got %q)", v)
	case strings.Contains(v, "  "):
		return fmt.Sprintf("must not have two spaces in a row (got %q)", v)
	}
	return ""
}

// SenderKey is a value as senders are compared, its canonical form: sender
// IDs and agents case-insensitively, with surrounding spaces dropped and
// inner runs of spaces read as one; numbers as their digits without a
// leading "+" or zeros ("0015550001111", "015550001111" and
// "+15550001111" are all 15550001111). Migration 135 computes the same key
// in SQL for the rows it rewrites; the two must agree.
func SenderKey(v string) string {
	if v != "" && strings.Trim(v, "+0123456789") == "" {
		return strings.TrimLeft(v, "+0")
	}
	v = strings.ToLower(strings.Trim(v, " "))
	for strings.Contains(v, "  ") {
		v = strings.ReplaceAll(v, "  ", " ")
	}
	return v
}

// RouteSenderKey is a provider's own sender as accounts' senders are
// compared: providers are configured with numbers with or without a
// leading "+", accounts hold their digits.
func RouteSenderKey(v string) string { return SenderKey(v) }

// MayUseRouteSender reports whether an account may send from a route
// provider's own sender that holders (the accounts that have it approved,
// at most one) hold: nobody's is the deployment's and everyone's; a held
// one is its holder's alone.
func MayUseRouteSender(holders []string, accountID string) bool {
	return len(holders) == 0 || holders[0] == accountID
}
