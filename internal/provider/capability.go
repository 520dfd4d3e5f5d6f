package provider

import "context"

// Revoker is a provider that can take back a message it accepted and has
// not delivered yet (RCS Business Messaging). An RCS message with an SMS
// fallback that such a provider took waits for its delivery until its
// Result.FallbackAt; then it is taken back and sent as SMS, so that the
// recipient never gets both. Revoke returns one answer per message, in
// order.
type Revoker interface {
	Revoke(ctx context.Context, msgs []Outbound) []Revocation
}

// CapabilityChecker is a provider that can tell, before a send, which
// numbers can receive RCS. Numbers missing from the answer are unknown:
// they are sent as RCS and the provider's own refusal (RCS_NOT_SUPPORTED)
// decides.
type CapabilityChecker interface {
	Capabilities(ctx context.Context, numbers []string) map[string]bool
}

// Chunker is a provider that wants its hand-overs recorded every few
// messages rather than once per claimed batch: a carrier that acknowledged
// a message this node then failed to record would get it again from
// whichever node takes over, so the fewer messages between records, the
// fewer such duplicates a crash can cause.
type Chunker interface {
	HandOverChunk() int
}

// Capabilities are a provider's optional capabilities; a nil field is one
// it does not have.
type Capabilities struct {
	Querier Querier
	Revoker Revoker
	Checker CapabilityChecker
	Chunker Chunker
}

// CapabilitiesOf finds what p can do beyond Submit, by the interfaces it
// implements. It is the one place that looks: every caller asks it rather
// than asserting types itself. An adapter package states what its adapter
// offers with compile-time guards (var _ Querier = (*adapter)(nil)).
func CapabilitiesOf(p Provider) Capabilities {
	var c Capabilities
	c.Querier, _ = p.(Querier)
	c.Revoker, _ = p.(Revoker)
	c.Checker, _ = p.(CapabilityChecker)
	c.Chunker, _ = p.(Chunker)
	return c
}

// ChunkSize is how many messages to hand p at once: its Chunker's answer,
// or 0 for the whole batch.
func (c Capabilities) ChunkSize() int {
	if c.Chunker == nil {
		return 0
	}
	return max(c.Chunker.HandOverChunk(), 0)
}
