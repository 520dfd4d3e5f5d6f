package app

import (
	"reflect"
	"testing"
)

// A node's parts start after what they need and so stop before it: the
// fronts before the workers, what hands out work before what takes it,
// the providers after every worker, storage last.
func TestPartsStartInDependencyOrder(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	want := []string{"storage", "rate limits", "tracker", "sends", "leases", "providers",
		"webhook worker", "simulator", "dispatcher", "receipt checker", "sweeper", "retention", "http"}
	if got := e.srv.life.Names(); !reflect.DeepEqual(got, want) {
		t.Errorf("parts\n got %q\nwant %q", got, want)
	}
}
