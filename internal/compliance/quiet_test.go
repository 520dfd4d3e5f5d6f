package compliance

import (
	"testing"
	"time"
)

func TestParseWindow(t *testing.T) {
	for in, want := range map[string]string{"21:00-08:00": "21:00-08:00", " 09:30 - 17:45 ": "09:30-17:45", "": "", "off": "",
		"00:00-06:00": "00:00-06:00"} {
		w, err := ParseWindow(in)
		if err != nil || w.String() != want {
			t.Errorf("ParseWindow(%q) = %q, %v; want %q", in, w.String(), err, want)
		}
	}
	for _, bad := range []string{"21-08", "21:00", "24:00-08:00", "21:60-08:00", "08:00-08:00", "9:00-17:00", "21:00–08:00", "aa:bb-cc:dd"} {
		if _, err := ParseWindow(bad); err == nil {
			t.Errorf("ParseWindow(%q) accepted", bad)
		}
	}
}

func zone(t *testing.T, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestUntilOneZone(t *testing.T) {
	w, _ := ParseWindow("21:00-08:00")
	sp := zone(t, "America/Sao_Paulo") // UTC-3, no daylight saving
	at := func(s string) time.Time {
		v, err := time.ParseInLocation("2006-01-02 15:04", s, sp)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct{ due, want string }{
		{"2026-11-21 12:00", "2026-11-21 12:00"}, // outside: at once
		{"2026-11-21 20:59", "2026-11-21 20:59"},
		{"2026-11-21 21:00", "2026-11-22 08:00"}, // evening: next morning
		{"2026-11-21 23:30", "2026-11-22 08:00"},
		{"2026-11-22 03:00", "2026-11-22 08:00"}, // small hours: this morning
		{"2026-11-22 07:59", "2026-11-22 08:00"},
		{"2026-11-22 08:00", "2026-11-22 08:00"},
	} {
		if got := w.Until(at(tc.due), []*time.Location{sp}); !got.Equal(at(tc.want)) {
			t.Errorf("due %s: goes %s, want %s", tc.due, got.In(sp).Format("2006-01-02 15:04"), tc.want)
		}
	}
	day, _ := ParseWindow("12:00-14:00") // a window that does not span midnight
	if got := day.Until(at("2026-11-21 13:00"), []*time.Location{sp}); !got.Equal(at("2026-11-21 14:00")) {
		t.Errorf("12:00-14:00 at 13:00: %s", got.In(sp))
	}
	if got := (Window{}).Until(at("2026-11-21 23:00"), []*time.Location{sp}); !got.Equal(at("2026-11-21 23:00")) {
		t.Errorf("no window held the message until %s", got)
	}
	if got := w.Until(at("2026-11-21 23:00"), nil); !got.Equal(at("2026-11-21 23:00")) {
		t.Errorf("no zone held the message until %s", got)
	}
}

// With several zones the message goes at the first moment that is outside
// the window in all of them.
func TestUntilSeveralZones(t *testing.T) {
	w, _ := ParseWindow("21:00-08:00")
	ny, la := zone(t, "America/New_York"), zone(t, "America/Los_Angeles") // UTC-5 and UTC-8 in November
	utc := func(s string) time.Time {
		v, err := time.Parse("2006-01-02 15:04", s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	zones := []*time.Location{ny, la}
	for _, tc := range []struct{ due, want string }{
		// 12:00 UTC: 07:00 New York (quiet until 08:00 = 13:00 UTC), 04:00 Los Angeles (until 16:00 UTC).
		{"2026-11-21 12:00", "2026-11-21 16:00"},
		// 18:00 UTC: 13:00 and 10:00: at once.
		{"2026-11-21 18:00", "2026-11-21 18:00"},
		// 02:30 UTC: 21:30 New York (quiet), 18:30 Los Angeles (not yet): the
		// quiet period of both ends at 08:00 Los Angeles = 16:00 UTC.
		{"2026-11-22 02:30", "2026-11-22 16:00"},
	} {
		if got := w.Until(utc(tc.due), zones); !got.Equal(utc(tc.want)) {
			t.Errorf("due %s UTC: goes %s, want %s UTC", tc.due, got.UTC().Format("2006-01-02 15:04"), tc.want)
		}
	}
	// The first end is not enough when another zone is still quiet then:
	// 22:30 UTC is 22:30 in London (quiet until 08:00 UTC) and 07:30 in
	// Tokyo (quiet until 23:00 UTC); the message goes at 08:00 UTC, when
	// Tokyo's evening window has not begun yet.
	tokyo, london := zone(t, "Asia/Tokyo"), zone(t, "Europe/London")
	if got := w.Until(utc("2026-11-21 22:30"), []*time.Location{tokyo, london}); !got.Equal(utc("2026-11-22 08:00")) {
		t.Errorf("Tokyo and London: %s", got.UTC())
	}
	// 10:00 UTC is midnight in Honolulu (quiet until 18:00 UTC), 23:00 in
	// Auckland (quiet until 19:00 UTC) and 10:00 in London: the latest end.
	honolulu, auckland := zone(t, "Pacific/Honolulu"), zone(t, "Pacific/Auckland")
	if got := w.Until(utc("2026-11-21 10:00"), []*time.Location{honolulu, auckland, london}); !got.Equal(utc("2026-11-21 19:00")) {
		t.Errorf("zones around the world: %s", got.UTC())
	}
}

// Daylight saving: the end is the local wall-clock time of that day.
func TestUntilAcrossDaylightSaving(t *testing.T) {
	w, _ := ParseWindow("21:00-08:00")
	ny := zone(t, "America/New_York")
	// Clocks go back on 2026-11-01 at 02:00 in New York.
	due := time.Date(2026, 10, 31, 22, 0, 0, 0, ny)
	want := time.Date(2026, 11, 1, 8, 0, 0, 0, ny)
	if got := w.Until(due, []*time.Location{ny}); !got.Equal(want) {
		t.Errorf("over the change: %s, want %s", got, want)
	}
}

func TestZones(t *testing.T) {
	names := func(digits string) []string {
		var out []string
		for _, l := range Zones(digits) {
			out = append(out, l.String())
		}
		return out
	}
	if got := names("442073238299"); len(got) != 1 || got[0] != "Europe/London" {
		t.Errorf("London number: %v", got)
	}
	if got := names("12067798181"); len(got) != 1 || got[0] != "America/Los_Angeles" {
		t.Errorf("Seattle number: %v", got)
	}
	if got := names("5511999990000"); len(got) == 0 {
		t.Errorf("São Paulo mobile: no zone")
	}
	// A range the numbering plan does not place (North American toll-free):
	// every zone of the calling code.
	if got := names("18005551234"); len(got) < 10 {
		t.Errorf("toll-free number: %v, want the calling code's zones", got)
	}
	// Those span 21 hours: an 11-hour window leaves no moment free in all,
	// so the message goes when the window ends where it ends last.
	w, _ := ParseWindow("21:00-08:00")
	due := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	got := w.Until(due, Zones("18005551234"))
	if !got.After(due) || got.Sub(due) > 24*time.Hour {
		t.Errorf("toll-free number due %s goes %s", due, got)
	}
}
