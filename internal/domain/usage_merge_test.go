package domain

import (
	"fmt"
	"slices"
	"testing"
)

// TestMergeUsage: deltas of one key add up into one, in the order the
// keys first came, and keys whose sum is zero are left out; the same
// whether the deltas are few (merged by a scan) or many (by a map).
func TestMergeUsage(t *testing.T) {
	for _, keys := range []int{1, 3, 16, 17, 40} {
		t.Run(fmt.Sprint(keys, " keys"), func(t *testing.T) {
			var ds []UsageDelta
			want := map[string]int64{}
			var order []string
			for round := range 3 {
				for k := range keys {
					c := fmt.Sprint(k)
					n := int64(round + 1)
					if k%5 == 4 {
						n = []int64{1, 1, -2}[round] // sums to zero: left out
					}
					ds = append(ds, UsageDelta{UsageKey: UsageKey{AccountID: "acc", Env: Live, Day: 20000, Channel: SMS, Country: c},
						UsageCount: UsageCount{Messages: n}})
					if round == 0 {
						order = append(order, c)
					}
					want[c] += n
				}
			}
			got := MergeUsage(ds)
			var gotOrder []string
			for _, d := range got {
				gotOrder = append(gotOrder, d.Country)
				if d.Messages != want[d.Country] {
					t.Errorf("country %s: %d messages, want %d", d.Country, d.Messages, want[d.Country])
				}
			}
			wantOrder := slices.DeleteFunc(order, func(c string) bool { return want[c] == 0 })
			if !slices.Equal(gotOrder, wantOrder) {
				t.Errorf("keys %v, want %v", gotOrder, wantOrder)
			}
		})
	}
}
