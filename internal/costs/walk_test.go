package costs

import (
	"reflect"
	"testing"
)

func TestWalkInPrefixOrderAndStops(t *testing.T) {
	tb, err := FromMap(map[string]float64{"44": 0.03, "1": 0.01, "447": 0.04, "10": 0.02, "2": 0.05})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	tb.Walk(func(p string, c int64) bool { got = append(got, p+"="+Format(c)); return true })
	want := []string{"1=0.01", "10=0.02", "2=0.05", "44=0.03", "447=0.04"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("walk = %v, want %v", got, want)
	}
	got = nil
	tb.Walk(func(p string, _ int64) bool { got = append(got, p); return len(got) < 2 })
	if !reflect.DeepEqual(got, []string{"1", "10"}) {
		t.Fatalf("stopped walk = %v", got)
	}
	var none *Table
	none.Walk(func(string, int64) bool { t.Fatal("nil table walked"); return true })
}
