package compliance

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	_ "time/tzdata" // the zones must resolve on hosts without a zoneinfo database

	"github.com/nyaruka/phonenumbers"
)

// Window is a daily quiet period in the recipient's local time, from Start
// to End in minutes after midnight. A Start after End spans midnight
// (21:00–08:00). The zero Window is no quiet hours at all.
type Window struct {
	Start, End int
	set        bool
}

// ErrWindow explains the accepted form of a window.
var ErrWindow = errors.New(`quiet hours must be "HH:MM-HH:MM" in 24-hour time with different start and end (e.g. 21:00-08:00), or "" for none`)

// ParseWindow reads "21:00-08:00"; "" (and "off") is no window.
func ParseWindow(s string) (Window, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "off") {
		return Window{}, nil
	}
	from, to, ok := strings.Cut(s, "-")
	if !ok {
		return Window{}, ErrWindow
	}
	start, err1 := clock(from)
	end, err2 := clock(to)
	if err1 != nil || err2 != nil || start == end {
		return Window{}, ErrWindow
	}
	return Window{Start: start, End: end, set: true}, nil
}

func clock(s string) (int, error) {
	s = strings.TrimSpace(s)
	if len(s) != 5 || s[2] != ':' {
		return 0, ErrWindow
	}
	for _, i := range []int{0, 1, 3, 4} {
		if s[i] < '0' || s[i] > '9' {
			return 0, ErrWindow
		}
	}
	h, m := int(s[0]-'0')*10+int(s[1]-'0'), int(s[3]-'0')*10+int(s[4]-'0')
	if h > 23 || m > 59 {
		return 0, ErrWindow
	}
	return h*60 + m, nil
}

// IsZero reports whether there are no quiet hours.
func (w Window) IsZero() bool { return !w.set }

// String is the stored and shown form, "21:00-08:00", or "" for none.
func (w Window) String() string {
	if !w.set {
		return ""
	}
	return fmt.Sprintf("%02d:%02d-%02d:%02d", w.Start/60, w.Start%60, w.End/60, w.End%60)
}

// in reports whether a local time lies inside the window.
func (w Window) in(local time.Time) bool {
	m := local.Hour()*60 + local.Minute()
	if w.Start < w.End {
		return m >= w.Start && m < w.End
	}
	return m >= w.Start || m < w.End
}

// end is the end of the quiet period that local lies in, in its zone. A
// wall-clock end that daylight saving skips is normalised by time.Date.
func (w Window) end(local time.Time) time.Time {
	day := 0
	if w.Start > w.End && local.Hour()*60+local.Minute() >= w.Start {
		day = 1 // the evening part: quiet until tomorrow morning
	}
	y, mo, d := local.Date()
	return time.Date(y, mo, d+day, w.End/60, w.End%60, 0, 0, local.Location())
}

// Until is when a message due at t may be handed over to a recipient who
// may live in any of zones.
//
// The rule, for numbers whose numbering plan names several zones (a
// country-wide mobile range, say), is the most conservative one: a message
// goes only at a moment that lies outside the window in every one of
// them. So the effective quiet period starts when the window starts in the
// zone where it starts earliest and ends when it ends in the zone where it
// ends last. When the zones lie so far apart that no moment of the day is
// outside the window in all of them (an 11-hour window over zones 13 or
// more hours apart), the message goes when the window ends in the zone
// where it ends last. Without a window, or without a known zone, it is t.
func (w Window) Until(t time.Time, zones []*time.Location) time.Time {
	if !w.set || len(zones) == 0 {
		return t
	}
	var first time.Time // the latest end of the window over the zones quiet at t
	r := t
	// Each round moves r to the latest end among the zones quiet at r; the
	// first r at which no zone is quiet is the earliest allowed moment
	// (every allowed moment lies at or after each such end).
	for round := 0; round < 2*len(zones)+2; round++ {
		next := r
		for _, z := range zones {
			if local := r.In(z); w.in(local) {
				if e := w.end(local); e.After(next) {
					next = e
				}
			}
		}
		if round == 0 {
			first = next
		}
		if next.Equal(r) {
			return r
		}
		if next.Sub(t) > 24*time.Hour {
			break
		}
		r = next
	}
	return first
}

// zoneCache resolves zone names once per process.
var zoneCache sync.Map // name -> *time.Location

// Zones are the time zones where the holder of a number may be, from
// libphonenumber's time zone map (by calling code and, where the numbering
// plan says, by area or range). An unknown number has none.
func Zones(digits string) []*time.Location {
	names, err := phonenumbers.GetTimezonesForPrefix(digits)
	if err != nil {
		return nil
	}
	out := make([]*time.Location, 0, len(names))
	for _, n := range names {
		if n == phonenumbers.UNKNOWN_TIMEZONE {
			continue
		}
		if l, ok := zoneCache.Load(n); ok {
			out = append(out, l.(*time.Location))
			continue
		}
		l, err := time.LoadLocation(n)
		if err != nil {
			continue // a name the zone database does not know: ignore it rather than guess
		}
		zoneCache.Store(n, l)
		out = append(out, l)
	}
	return out
}

// QuietUntil is when a message to a number, due at t, may be handed over
// under the quiet hours window (the stored form, "" for none). A window
// that does not parse holds nothing: it was checked when it was set.
func QuietUntil(window, digits string, t time.Time) time.Time {
	if window == "" {
		return t
	}
	w, err := ParseWindow(window)
	if err != nil || w.IsZero() {
		return t
	}
	return w.Until(t, Zones(digits))
}
