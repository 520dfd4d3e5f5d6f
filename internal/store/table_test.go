package store

import (
	"database/sql"
	"reflect"
	"slices"
	"testing"
	"time"
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

// The nullable columns' scanners take what the drivers hand over (nothing,
// an integer, a text) without going through sql.NullInt64's or
// sql.NullString's own Scan, and must read every value as those do,
// errors included.
func TestNullScannersReadAsDatabaseSQL(t *testing.T) {
	for _, src := range []any{nil, int64(0), int64(-7), int64(1796093399904), int32(12), float64(3), "42", "x", []byte("17"), true} {
		var want sql.NullInt64
		wantErr := want.Scan(src)
		got, err := nullInt64Of(src)
		if (err != nil) != (wantErr != nil) || got != want {
			t.Errorf("nullInt64Of(%#v) = %v, %v; sql.NullInt64 scans %v, %v", src, got, err, want, wantErr)
		}
	}
	for _, src := range []any{nil, "", "text", []byte("bytes"), int64(5), float64(1.5), true} {
		var want sql.NullString
		wantErr := want.Scan(src)
		got, err := nullStringOf(src)
		if (err != nil) != (wantErr != nil) || got != want {
			t.Errorf("nullStringOf(%#v) = %v, %v; sql.NullString scans %v, %v", src, got, err, want, wantErr)
		}
	}
}

// A message row has a dozen nullable columns and is read on the hot path:
// reading one (a time, NULL or set) allocates nothing.
func TestNullColumnsScanWithoutAllocating(t *testing.T) {
	var at time.Time
	var d time.Duration
	var ref string
	var b bool
	scanners := []sql.Scanner{(*msTime)(&at), (*msDuration)(&d), (*nullText)(&ref), (*intBool)(&b)}
	srcs := []any{nil, int64(1796093399904), nil, "ref"}
	n := testing.AllocsPerRun(100, func() {
		for i, s := range scanners[:2] {
			_ = s.Scan(srcs[i%2])
			_ = s.Scan(srcs[1])
		}
		_ = scanners[2].Scan(srcs[2])
		_ = scanners[2].Scan(srcs[3])
		_ = scanners[3].Scan(srcs[1])
	})
	if n != 0 {
		t.Errorf("scanning nullable columns allocated %v times a run", n)
	}
	if want := time.UnixMilli(1796093399904).UTC(); !at.Equal(want) || ref != "ref" || !b {
		t.Errorf("scanned %v, %q, %v", at, ref, b)
	}
}
