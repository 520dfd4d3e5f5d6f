package domain

// MarginRow is one group of the operators' margins report: live messages
// a provider took, what their accounts paid (micro-credits) and what their
// hand-overs cost (micro-units of the providers' currency).
type MarginRow struct {
	Key       string
	Messages  int64
	Segments  int64
	Price     int64
	Cost      int64
	Final     int64 // messages with a final status
	Delivered int64 // of which delivered (or read)
}

// MarginGroups are what the margins report groups by.
var MarginGroups = []string{"provider", "account", "country", "day"}
