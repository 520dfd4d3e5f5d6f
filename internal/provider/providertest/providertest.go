// Package providertest is the conformance suite every provider adapter
// runs in its own tests, and the recording Sink those tests share. An
// adapter's test gives Run a Harness: how to build the adapter against a
// stand-in of its peer (a fake SMSC, a fake platform, the simulator's test
// numbers), and which messages that peer accepts, refuses for now and
// refuses for good. Run then checks what the service relies on from every
// adapter, whatever its protocol.
package providertest

import (
	"context"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider"
)

// Harness is what the suite needs to know of one adapter.
type Harness struct {
	// Name is the name the adapter reports under (the name New gives it).
	Name string
	// Type is the adapter's registered type, when it has one: every
	// webhook route the type declares must have a receiver on the adapter.
	Type provider.Type
	// New builds the adapter, not started, reporting to sink, with a peer
	// of its own in its initial state (stopped when t ends).
	New func(t *testing.T, sink provider.Sink) Instance
}

// Instance is one adapter under test and its peer.
type Instance struct {
	Adapter provider.Adapter
	// Accept is a message the peer takes; i tells concurrent messages
	// apart (each its own recipient and id).
	Accept func(i int) provider.Outbound
	// Temporary is a message the peer refuses for now (throttled, down):
	// it may set the peer up so.
	Temporary func() provider.Outbound
	// Permanent is a message the peer refuses for good (a bad number).
	Permanent func() provider.Outbound
	// Long, when set, is a message the adapter hands over in several
	// parts (Result.Parts).
	Long func() provider.Outbound
	// Report, when set, makes the peer report an accepted message's final
	// status; nil when the peer reports on its own.
	Report func(t *testing.T, m provider.Outbound, r provider.Result)
}

// Run checks the adapter the harness builds: a stable Name; one Result per
// message, in order, with a Ref for each message taken (and its Parts
// when there are several); reports reaching the Sink by Ref or MessageID;
// temporary and permanent refusals typed as provider.Error; a cancelled
// context honoured; Start and Stop idempotent and Stop prompt; Health
// reporting; the declared capabilities really there; Submit safe to call
// concurrently (run the adapter's tests with -race).
func Run(t *testing.T, h Harness) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(t *testing.T, h Harness)
	}{
		{"Name", testName},
		{"OneResultPerMessageInOrder", testResults},
		{"Parts", testParts},
		{"ReportsReachTheSink", testReports},
		{"Refusals", testRefusals},
		{"CancelledContext", testCancelled},
		{"Lifecycle", testLifecycle},
		{"Health", testHealth},
		{"Capabilities", testCapabilities},
		{"ConcurrentSubmit", testConcurrent},
	} {
		t.Run(c.name, func(t *testing.T) { c.run(t, h) })
	}
}

// start builds and starts an instance, stopped when the test ends.
func start(t *testing.T, h Harness, sink provider.Sink) Instance {
	t.Helper()
	if sink == nil {
		sink = &Sink{}
	}
	in := h.New(t, sink)
	if in.Adapter == nil {
		t.Fatal("the harness built no adapter")
	}
	if err := in.Adapter.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = in.Adapter.Stop(context.Background()) })
	return in
}
