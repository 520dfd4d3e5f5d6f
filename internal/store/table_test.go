package store

import (
	"reflect"
	"slices"
	"testing"
)

// A bind function lists pointers into the row it is handed; one that
// pointed elsewhere (another row, a variable of its own) would write and
// read the wrong values without any error, and so would two columns bound
// to one field. Each table's columns must all lie inside its row, each
// field once, and be as many as its names.
func TestTablesBindTheirRow(t *testing.T) {
	checkBind(t, accounts)
	checkBind(t, events)
	checkBind(t, attempts)
	checkBind(t, inbounds)
	checkBind(t, keys)
	checkBind(t, ledgerLines)
	checkBind(t, limitRequests)
	checkBind(t, mediaFiles)
	checkBind(t, campaigns)
	checkBind(t, messages)
	checkBind(t, optOuts)
	checkBind(t, parts)
	checkBind(t, pendingReports)
	checkBind(t, senders, "value_key") // derived from value, read back nowhere
	checkBind(t, smppUsers)
	checkBind(t, smppItems)
	checkBind(t, smppRefusals)
	checkBind(t, templates)
	checkBind(t, usageLines)
	checkBind(t, users)
	checkBind(t, sessions)
}

func checkBind[T any](t *testing.T, tb table[T], derived ...string) {
	t.Helper()
	var row T
	lo := reflect.ValueOf(&row).Pointer()
	hi := lo + reflect.TypeOf(row).Size()
	dests := tb.dests(&row, nil)
	if args := tb.args(&row, nil); len(args) != len(tb.names) || len(dests) != len(tb.names) {
		t.Fatalf("%s: %d names, %d values, %d scan targets", tb.name, len(tb.names), len(args), len(dests))
	}
	seen := map[string]bool{}
	type target struct {
		p  uintptr
		as reflect.Type // the row's first field and a scanner of the whole row share an address
	}
	bound := map[target]string{}
	for i, name := range tb.names {
		if seen[name] {
			t.Errorf("%s: column %s listed twice", tb.name, name)
		}
		seen[name] = true
		if slices.Contains(derived, name) {
			continue
		}
		v := reflect.ValueOf(dests[i])
		if v.Kind() == reflect.Struct { // a scanner holding the field's pointer
			v = v.Field(0)
		}
		if v.Kind() != reflect.Pointer {
			t.Errorf("%s.%s: scan target %T is not a pointer into the row", tb.name, name, dests[i])
			continue
		}
		p := v.Pointer()
		if p < lo || p >= hi {
			t.Errorf("%s.%s: scan target %T points outside the row", tb.name, name, dests[i])
		}
		if other, dup := bound[target{p, v.Type()}]; dup {
			t.Errorf("%s: %s and %s are bound to the same field", tb.name, other, name)
		}
		bound[target{p, v.Type()}] = name
	}
}
