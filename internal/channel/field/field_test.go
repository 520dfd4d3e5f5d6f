package field

import "testing"

func TestChecker(t *testing.T) {
	var c Checker
	c.Text("a", "", true, 5)
	c.Text("b", "", false, 5)
	c.Text("c", "ééééé", true, 5)
	c.Text("d", "ééééé!", true, 5)
	c.Add("e", "bad %d", 7)
	want := []Problem{{"a", "is required"}, {"d", "must be at most 5 characters, got 6"}, {"e", "bad 7"}}
	if len(c.Problems) != len(want) {
		t.Fatalf("problems %v", c.Problems)
	}
	for i := range want {
		if c.Problems[i] != want[i] {
			t.Fatalf("problem %d: %v, want %v", i, c.Problems[i], want[i])
		}
	}
}
