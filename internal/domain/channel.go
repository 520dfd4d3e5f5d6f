package domain

import (
	"fmt"
	"strings"
)

// Channel is how a message reaches its recipient.
type Channel string

// The channels.
const (
	SMS      Channel = "SMS"
	WhatsApp Channel = "WHATSAPP"
	RCS      Channel = "RCS"
)

// Channels lists every channel.
var Channels = []Channel{SMS, WhatsApp, RCS}

// ParseChannel reads a channel name, case-insensitively (the API accepts
// "sms" as well as "SMS").
func ParseChannel(s string) (Channel, error) {
	c := Channel(strings.ToUpper(strings.TrimSpace(s)))
	switch c {
	case SMS, WhatsApp, RCS:
		return c, nil
	}
	return "", fmt.Errorf("unknown channel %q", s)
}

// HasReadReceipts reports whether READ can follow DELIVERED.
func (c Channel) HasReadReceipts() bool { return c == WhatsApp || c == RCS }

// Environment separates test traffic (simulated, never charged) from live
// traffic inside one account.
type Environment string

// The environments, as API keys spell them (svc_test_…, svc_live_…).
const (
	Test Environment = "test"
	Live Environment = "live"
)

// ParseEnvironment reads an environment name.
func ParseEnvironment(s string) (Environment, error) {
	switch e := Environment(s); e {
	case Test, Live:
		return e, nil
	}
	return "", fmt.Errorf("unknown environment %q: test or live", s)
}

// Live reports whether messages of this environment reach real providers
// and are charged.
func (e Environment) Live() bool { return e == Live }
