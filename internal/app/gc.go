package app

import "runtime/debug"

// defaultGCPercent is the collector's target growth when the operator has not set GOGC.
//
// A node's live heap is small and nearly constant (about 10 MiB under a full load of sends:
// the in-memory queues hold only what is leased, never a preallocated buffer), while it
// allocates some 80 KiB per message in flight. At Go's default of 100 the collector then
// starts a cycle every ~10 MiB, twenty or more times a second, and every cycle pays again
// for scanning the stacks of a few hundred goroutines and the roots: that fixed cost, not
// marking, made a node with a smaller heap spend more CPU per message than one with a larger.
// Four hundred lets the heap grow to five times the live data (about 50 MiB) before a cycle,
// which is what a node used before its queues stopped preallocating. GOGC and GOMEMLIMIT
// set in the environment still win, as the Go runtime documents them.
const defaultGCPercent = 400

// tuneGC applies defaultGCPercent unless GOGC is set, and returns the percentage in force
// (negative when collection is off).
func tuneGC(getenv func(string) string, setPercent func(int) int) int {
	if getenv("GOGC") != "" {
		current := setPercent(-1)
		setPercent(current)
		return current
	}
	setPercent(defaultGCPercent)
	return defaultGCPercent
}

// setGCPercent is the runtime's setter, kept apart so tests can observe tuneGC without
// changing the collector of the test process.
func setGCPercent(p int) int { return debug.SetGCPercent(p) }
