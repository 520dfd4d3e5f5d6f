package webhook

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestDefaultSchedule(t *testing.T) {
	want := Schedule{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour,
		10 * time.Hour, 14 * time.Hour, 20 * time.Hour, 24 * time.Hour}
	got := DefaultSchedule()
	if !slices.Equal(got, want) {
		t.Fatalf("DefaultSchedule() = %v, want %v", got, want)
	}
	got[0] = time.Hour
	if DefaultSchedule()[0] != 5*time.Second {
		t.Fatal("DefaultSchedule shares state between calls")
	}
}

func TestParseSchedule(t *testing.T) {
	tests := []struct {
		in      string
		want    Schedule
		wantErr string
	}{
		{"1s,2s,4s", Schedule{time.Second, 2 * time.Second, 4 * time.Second}, ""},
		{" 500ms , 1m30s ", Schedule{500 * time.Millisecond, 90 * time.Second}, ""},
		{"24h", Schedule{24 * time.Hour}, ""},
		{"", nil, "empty retry schedule"},
		{"   ", nil, "empty retry schedule"},
		{"1s,,2s", nil, "item 2 is empty"},
		{"1s,", nil, "item 2 is empty"},
		{",1s", nil, "item 1 is empty"},
		{"1s,0s", nil, "must be positive"},
		{"-5s", nil, "must be positive"},
		{"1s,soon", nil, "item 2"},
		{"5", nil, "missing unit"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSchedule(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSchedule(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || !slices.Equal(got, tt.want) {
				t.Fatalf("ParseSchedule(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestScheduleDelay(t *testing.T) {
	s := Schedule{10 * time.Second, time.Minute, time.Hour}
	fixed := func(v float64) func() float64 { return func() float64 { return v } }
	tests := []struct {
		name   string
		n      int
		rnd    func() float64
		want   time.Duration
		wantOK bool
	}{
		{"first retry, no jitter", 1, fixed(0.5), 10 * time.Second, true},
		{"first retry, lowest", 1, fixed(0), 9 * time.Second, true},
		{"second retry, upper edge", 2, fixed(0.999999), 66*time.Second - 12*time.Microsecond, true},
		{"third retry, quarter", 3, fixed(0.25), 57 * time.Minute, true},
		{"rnd above range clamped", 3, fixed(7), 66 * time.Minute, true},
		{"rnd below range clamped", 3, fixed(-1), 54 * time.Minute, true},
		{"exhausted", 4, fixed(0.5), 0, false},
		{"far beyond", 100, fixed(0.5), 0, false},
		{"zero is not a retry", 0, fixed(0.5), 0, false},
		{"negative", -1, fixed(0.5), 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := s.Delay(tt.n, tt.rnd)
			if ok != tt.wantOK {
				t.Fatalf("Delay(%d) ok = %v, want %v", tt.n, ok, tt.wantOK)
			}
			// Float rounding may cost a nanosecond or so.
			if diff := got - tt.want; diff < -time.Microsecond || diff > time.Microsecond {
				t.Fatalf("Delay(%d) = %v, want %v", tt.n, got, tt.want)
			}
		})
	}
	if _, ok := Schedule(nil).Delay(1, fixed(0.5)); ok {
		t.Fatal("empty schedule gave a delay")
	}
}

// TestScheduleDelayJitterBounds sweeps rnd over [0,1) for every step of
// the default schedule, including the nil (math/rand) source.
func TestScheduleDelayJitterBounds(t *testing.T) {
	s := DefaultSchedule()
	for n := 1; n <= len(s); n++ {
		base := s[n-1]
		lo, hi := base-base/10, base+base/10
		for i := range 1000 {
			r := float64(i) / 1000
			var rnd func() float64
			if i%2 == 1 {
				rnd = func() float64 { return r }
			}
			d, ok := s.Delay(n, rnd)
			if !ok || d < lo || d > hi {
				t.Fatalf("Delay(%d) = %v, %v; want within [%v, %v]", n, d, ok, lo, hi)
			}
		}
	}
	if _, ok := s.Delay(len(s)+1, nil); ok {
		t.Fatal("default schedule not exhausted after its last step")
	}
}
