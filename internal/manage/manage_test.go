package manage

import (
	"slices"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/user"
)

func TestParseAllowlist(t *testing.T) {
	got, err := ParseAllowlist([]string{" 203.0.113.7", "2001:DB8::/32", "198.51.100.9/24", "203.0.113.7", "::ffff:192.0.2.1", "10.0.0.0/8"})
	want := []string{"203.0.113.7", "2001:db8::/32", "198.51.100.0/24", "192.0.2.1", "10.0.0.0/8"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("ParseAllowlist = %v, %v; want %v", got, err, want)
	}
	if got, err := ParseAllowlist(nil); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("an empty list: %v %v", got, err)
	}
	_, err = ParseAllowlist([]string{"203.0.113.7", "host.example", "10.0.0.1/33", "fe80::1%eth0"})
	v, ok := domain.IsValidation(err)
	if !ok || len(v.Fields) != 3 || v.Fields[0].Field != "entries[1]" || v.Fields[1].Field != "entries[2]" || v.Fields[2].Field != "entries[3]" {
		t.Fatalf("invalid entries: %v", err)
	}
}

func TestRoles(t *testing.T) {
	order := []string{user.Viewer, user.Developer, user.Admin, user.Owner, user.Operator}
	for i, role := range order {
		a := Actor{Role: role}
		for j, need := range order {
			if got := a.Can(need); got != (i >= j) {
				t.Errorf("%s.Can(%s) = %v", role, need, got)
			}
		}
		if a.Can("root") || a.Can("") {
			t.Errorf("%s may do what no role names", role)
		}
	}
	if (Actor{Role: "stranger"}).Can(user.Viewer) {
		t.Error("an unknown role reads")
	}
	if !Console.Operator() {
		t.Error("the console is not an operator")
	}
}
