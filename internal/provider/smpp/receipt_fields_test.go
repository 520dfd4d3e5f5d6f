package smpp

import (
	"sort"
	"strings"
	"testing"
)

// mapReceiptFields is the parser receiptFields replaced, kept as the
// reference its results must equal: a map from each key found to its
// value.
func mapReceiptFields(s string) map[string]string {
	keys := [...]string{"id", "sub", "dlvrd", "submit date", "done date", "stat", "err"}
	lower := asciiLower(s)
	head := len(s)
	if i := keyAt(lower, "text:", 0, head); i >= 0 {
		head = i
	}
	type hit struct {
		key      string
		at, from int
	}
	var hits []hit
	for _, k := range keys {
		if i := keyAt(lower, k+":", 0, head); i >= 0 {
			hits = append(hits, hit{key: k, at: i, from: i + len(k) + 1})
		}
	}
	sort.Slice(hits, func(a, b int) bool { return hits[a].at < hits[b].at })
	out := make(map[string]string, len(hits))
	for i, h := range hits {
		end := head
		if i+1 < len(hits) {
			end = hits[i+1].at
		}
		if h.from <= end {
			out[h.key] = strings.TrimSpace(s[h.from:end])
		}
	}
	return out
}

func sameFields(t *testing.T, s string) {
	t.Helper()
	got := receiptFields(s)
	want := mapReceiptFields(s)
	for i, pat := range receiptKeys {
		if w := want[strings.TrimSuffix(pat, ":")]; got[i] != w {
			t.Fatalf("%q: %s = %q, the reference parser says %q", s, pat, got[i], w)
		}
	}
}

func TestReceiptFieldsEqualTheReference(t *testing.T) {
	for _, s := range []string{
		"id:0A1B sub:001 dlvrd:000 submit date:2611211000 done date:2611211005 stat:UNDELIV err:034 text:stat:DELIVRD id:x",
		"ID:7 SUB:1 DLVRD:1 SUBMIT DATE:2611211000 DONE DATE:2611211005 STAT:DELIVRD ERR:0 TEXT:hi",
		"stat:DELIVRD id:9 err:000",
		"done date:2611211005 id:abc stat:EXPIRED",
		"xid:1 id:2 stat:ACCEPTD",
		"id: spaced   stat:  DELIVRD  ",
		"id:1 text:",
		"text:id:1 stat:DELIVRD",
		"id:",
		"",
		"no fields at all",
		"id:é stat:DÉLIVRÉ err:ü",
		"id:1 id:2 stat:a stat:b",
		"sub:001dlvrd:001 id:5",
	} {
		sameFields(t, s)
	}
}

func FuzzReceiptFields(f *testing.F) {
	f.Add("id:0A1B sub:001 dlvrd:000 submit date:2611211000 done date:2611211005 stat:UNDELIV err:034 text:x")
	f.Add("STAT:DELIVRD ID:1 text:id:2")
	f.Fuzz(func(t *testing.T, s string) { sameFields(t, s) })
}

func BenchmarkReceiptFields(b *testing.B) {
	s := "id:0A1B2C3D sub:001 dlvrd:001 submit date:2611211000 done date:2611211005 stat:DELIVRD err:000 text:Hello from msgsvc"
	b.ReportAllocs()
	for b.Loop() {
		_ = receiptFields(s)
	}
}
