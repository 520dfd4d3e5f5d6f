package intake

import (
	"fmt"
	"slices"
	"strings"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// resolveSender checks the sender a send asks for, or takes the account's
// default for the channel ("" leaves it to the route).
func resolveSender(verr *domain.ValidationError, a domain.Account, channel domain.Channel, from string) string {
	set := a.Senders[channel]
	if from == "" {
		return set.Default
	}
	if msg := domain.SenderProblem(channel, from); msg != "" {
		verr.AddAt("sender", domain.FieldInvalid, "%s", msg)
		return ""
	}
	if !slices.Contains(set.Values, from) {
		approved := "none yet; an operator adds them with msgsvc sender add"
		if len(set.Values) > 0 {
			approved = strings.Join(set.Values, ", ")
		}
		verr.AddAt("sender", domain.FieldNotApproved, "%s", fmt.Sprintf("is not an approved %s sender of this account (approved: %s)", channel, approved))
		return ""
	}
	return from
}
