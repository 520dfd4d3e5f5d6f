package message

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"msgsvc/internal/domain"
	"msgsvc/internal/store"
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
func SenderProblem(channel domain.Channel, v string) string {
	switch channel {
	case domain.SMS:
		if numberSender.MatchString(v) || alphaSender.MatchString(v) && hasLetter.MatchString(v) {
			return ""
		}
		return "must be a sender ID of 1 to 11 letters, digits and spaces with at least one letter, or a number of up to 15 digits"
	case domain.WhatsApp:
		if numberSender.MatchString(v) {
			return ""
		}
		return "must be the business phone number, digits only"
	case domain.RCS:
		if agentSender.MatchString(v) {
			return ""
		}
		return "must be an RCS agent id"
	}
	return "is not a sender of a known channel"
}

// resolveSender checks the sender a send asks for, or takes the account's
// default for the channel ("" leaves it to the route).
func resolveSender(verr *ValidationError, a store.Account, channel domain.Channel, from string) string {
	set := a.Senders[channel]
	if from == "" {
		return set.Default
	}
	if msg := SenderProblem(channel, from); msg != "" {
		verr.add("from", "%s", msg)
		return ""
	}
	if !slices.Contains(set.Values, from) {
		approved := "none yet; an operator adds them with msgsvc sender add"
		if len(set.Values) > 0 {
			approved = strings.Join(set.Values, ", ")
		}
		verr.add("from", "%s", fmt.Sprintf("is not an approved %s sender of this account (approved: %s)", channel, approved))
		return ""
	}
	return from
}
