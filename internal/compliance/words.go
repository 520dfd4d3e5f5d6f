package compliance

import "strings"

// Action is what an inbound message asks of the account's opt-out list.
type Action int

const (
	// None: an ordinary reply.
	None Action = iota
	// OptOut: the sender asked to receive no more messages.
	OptOut
	// OptIn: the sender asked to receive messages again.
	OptIn
)

func (a Action) String() string {
	switch a {
	case OptOut:
		return "opt-out"
	case OptIn:
		return "opt-in"
	}
	return "none"
}

// StopWords and StartWords are the public lists of docs/compliance.md,
// in upper case.
var (
	StopWords = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "REVOKE", "OPTOUT",
		"PARAR", "SAIR", "BAJA", "ARRET", "ABMELDEN"}
	StartWords = []string{"START", "UNSTOP", "YES"}
)

// Classify reads an inbound text: only the whole text, trimmed and
// case-folded, counts, so "Stop" and " stop\n" opt out while "please stop
// sending" is an ordinary reply passed to the integrator like any other.
func Classify(text string) Action {
	t := strings.TrimSpace(text)
	if len(t) > 16 { // longer than any word: the common case costs nothing
		return None
	}
	for _, w := range StopWords {
		if strings.EqualFold(t, w) {
			return OptOut
		}
	}
	for _, w := range StartWords {
		if strings.EqualFold(t, w) {
			return OptIn
		}
	}
	return None
}
