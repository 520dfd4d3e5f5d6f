package compliance

import "testing"

func TestClassify(t *testing.T) {
	for text, want := range map[string]Action{
		"STOP": OptOut, "stop": OptOut, " Stop\n": OptOut, "\tunsubscribe ": OptOut, "StopAll": OptOut,
		"cancel": OptOut, "END": OptOut, "quit": OptOut, "revoke": OptOut, "optout": OptOut, "parar": OptOut,
		"Sair": OptOut, "baja": OptOut, "ARRET": OptOut, "abmelden": OptOut,
		"START": OptIn, "unstop": OptIn, " yes ": OptIn,
		"": None, "OK": None, "please stop": None, "STOP!": None, "stop stop": None, "STOPP": None, "opt out": None,
		"no": None, "Yes please": None, "unsubscribe me from this list please": None,
	} {
		if got := Classify(text); got != want {
			t.Errorf("Classify(%q) = %v, want %v", text, got, want)
		}
	}
}
