package smpp

import (
	"sync"
	"time"
)

// maxPartSets bounds the incomplete inbound messages held at once, so that
// an SMSC sending first parts without end cannot exhaust memory. Past it,
// new sets are refused with a temporary error and the SMSC retries later.
const maxPartSets = 10000

// reasmKey identifies one concatenated inbound message. The reference alone
// is only unique per sender (and an 8-bit one wraps quickly), so the sender,
// the recipient and the part count are part of the key.
type reasmKey struct {
	From, To string
	Ref      uint16
	Total    uint8
}

type partSet struct {
	parts  [][]byte
	got    []bool
	have   int
	coding byte
	last   time.Time // when a part last arrived
	busy   bool      // complete, and being handed to the Sink
}

type addResult int

const (
	partHeld     addResult = iota // kept; more parts to come
	partComplete                  // every part is here: deliver, then finish
	partBusy                      // try again later (set being delivered, or too many sets)
	partInvalid                   // sequence number outside 1..total
)

// reassembler holds the parts of inbound messages until all have come. The
// parts are kept as septets (GSM, already unpacked) or octets, and joined
// before decoding, so that a character split across two parts by the
// sender (a UCS-2 surrogate pair, a GSM escape) still decodes.
type reassembler struct {
	timeout time.Duration

	mu   sync.Mutex
	sets map[reasmKey]*partSet
}

func newReassembler(timeout time.Duration) *reassembler {
	return &reassembler{timeout: timeout, sets: make(map[reasmKey]*partSet)}
}

// add stores part seq (from 1). When it completes the set, add returns the
// joined data and the first part's data_coding, and marks the set busy until
// finish says whether the Sink took it. A part received twice replaces the
// earlier copy.
func (r *reassembler) add(k reasmKey, seq uint8, coding byte, data []byte, now time.Time) ([]byte, byte, addResult) {
	if k.Total == 0 || seq == 0 || seq > k.Total {
		return nil, 0, partInvalid
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	set := r.sets[k]
	if set == nil {
		if len(r.sets) >= maxPartSets {
			return nil, 0, partBusy
		}
		set = &partSet{parts: make([][]byte, k.Total), got: make([]bool, k.Total), coding: coding}
		r.sets[k] = set
	}
	if set.busy {
		return nil, 0, partBusy
	}
	set.last = now
	if !set.got[seq-1] {
		set.got[seq-1] = true
		set.have++
	}
	set.parts[seq-1] = append([]byte(nil), data...)
	if seq == 1 {
		set.coding = coding
	}
	if set.have < len(set.parts) {
		return nil, 0, partHeld
	}
	set.busy = true
	var whole []byte
	for _, p := range set.parts {
		whole = append(whole, p...)
	}
	return whole, set.coding, partComplete
}

// finish ends the delivery of a complete set: forgotten when the Sink took
// it, kept (with all its parts) when it did not, so that the SMSC's retry of
// the last part completes it again.
func (r *reassembler) finish(k reasmKey, delivered bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if set := r.sets[k]; set != nil {
		if delivered {
			delete(r.sets, k)
		} else {
			set.busy = false
		}
	}
}

// expire drops the sets that saw no part for the timeout and returns how
// many. Their parts were acknowledged, so they are lost: the price of not
// holding deliver_sm_resp for minutes, which SMSCs do not allow.
func (r *reassembler) expire(now time.Time) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for k, set := range r.sets {
		if !set.busy && now.Sub(set.last) >= r.timeout {
			delete(r.sets, k)
			n++
		}
	}
	return n
}

func (r *reassembler) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.sets)
}
