package app

import "testing"

func TestTuneGC(t *testing.T) {
	t.Run("unset", func(t *testing.T) {
		percent := 100
		set := func(p int) int { old := percent; percent = p; return old }
		got := tuneGC(func(string) string { return "" }, set)
		if got != defaultGCPercent || percent != defaultGCPercent {
			t.Fatalf("GOGC unset: got %d, runtime at %d, want %d", got, percent, defaultGCPercent)
		}
	})
	t.Run("operator's GOGC wins", func(t *testing.T) {
		percent := 150 // what the runtime read from GOGC=150
		set := func(p int) int { old := percent; percent = p; return old }
		env := map[string]string{"GOGC": "150"}
		got := tuneGC(func(k string) string { return env[k] }, set)
		if got != 150 || percent != 150 {
			t.Fatalf("GOGC=150: got %d, runtime at %d, want both 150", got, percent)
		}
	})
	t.Run("collection off stays off", func(t *testing.T) {
		percent := -1
		set := func(p int) int { old := percent; percent = p; return old }
		got := tuneGC(func(k string) string { return map[string]string{"GOGC": "off"}[k] }, set)
		if got != -1 || percent != -1 {
			t.Fatalf("GOGC=off: got %d, runtime at %d", got, percent)
		}
	})
}
