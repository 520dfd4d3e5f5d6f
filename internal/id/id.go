// Package id makes the public identifiers of msgsvc: a short type prefix and a
// time-ordered random body, so that ids sort by creation time. Cursor paging
// and "most recent" queries rely on that order.
package id

import (
	"crypto/rand"
	"encoding/binary"
	"strings"
	"time"
)

// crockford is Crockford's base32 alphabet in lower case: no i, l, o, u,
// so ids survive being read aloud or retyped.
const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

// Prefixes of the public ids. They tell a support engineer at a glance what
// an id names.
const (
	Account  = "acc"
	Campaign = "cmp"
	Message  = "msg"
	Event    = "evt"
	Key      = "key"
	Ledger   = "led"
	Attempt  = "att"
	User     = "usr"
	Inbound  = "inb"
	Media    = "med"
	Request  = "req"
	Limit    = "lim"
	Sender   = "snd"
	SMPPUser = "smu"
	SMPPItem = "smd"
	// SMPPRefusal names a refused bind or submit_sm kept for operators.
	SMPPRefusal = "smr"
)

// New returns prefix + "_" + 26 characters: 48 bits of Unix milliseconds
// followed by 80 random bits, like a ULID. Ids made in the same millisecond
// by different processes do not collide with any practical probability.
func New(prefix string, now time.Time) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(now.UnixMilli())<<16)
	if _, err := rand.Read(raw[6:]); err != nil {
		// crypto/rand never fails on supported platforms (Go 1.24+ panics
		// itself); keep the compiler and linters satisfied.
		panic(err)
	}
	out := make([]byte, 0, len(prefix)+1+26)
	out = append(out, prefix...)
	out = append(out, '_')
	return string(append(out, encode(raw)...))
}

// encode writes 128 bits as 26 base32 characters, most significant first.
func encode(b [16]byte) []byte {
	hi := binary.BigEndian.Uint64(b[:8])
	lo := binary.BigEndian.Uint64(b[8:])
	out := make([]byte, 26)
	for i := 25; i >= 0; i-- {
		out[i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return out
}

// Sequence returns n ids made at the same instant that sort in the order
// they are returned: the random part of the first is incremented for each
// next one. The messages of a batch list in the order they were sent.
func Sequence(prefix string, now time.Time, n int) []string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(now.UnixMilli())<<16)
	if _, err := rand.Read(raw[6:]); err != nil {
		panic(err)
	}
	// Keep headroom so that adding n never carries into the time bits.
	raw[6] &= 0x7f
	out := make([]string, n)
	lo := binary.BigEndian.Uint64(raw[8:])
	for i := range out {
		binary.BigEndian.PutUint64(raw[8:], lo)
		b := make([]byte, 0, len(prefix)+27)
		b = append(b, prefix...)
		b = append(b, '_')
		out[i] = string(append(b, encode(raw)...))
		lo++
		if lo == 0 { // carry into the upper random bits
			raw[7]++
			if raw[7] == 0 {
				raw[6]++
			}
		}
	}
	return out
}

// Floor is the smallest id of prefix that New can make at t or later: ids
// made before t sort below it, so "id < Floor(t)" selects rows older than
// t, and "made since t" is a range of ids, through an index on id.
func Floor(prefix string, t time.Time) string {
	var raw [16]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(t.UnixMilli())<<16)
	out := make([]byte, 0, len(prefix)+1+26)
	out = append(out, prefix...)
	out = append(out, '_')
	return string(append(out, encode(raw)...))
}

// Derive returns the id of prefix that shares fromID's body: the campaign
// of a one-recipient send is named after its message, so that it can be
// found from the message alone and needs no row of its own. An id without
// a body derives "", which names nothing.
func Derive(prefix, fromID string) string {
	i := strings.IndexByte(fromID, '_')
	if i < 0 {
		return ""
	}
	return prefix + fromID[i:]
}
