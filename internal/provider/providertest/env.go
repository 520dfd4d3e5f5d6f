package providertest

import (
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider"
)

// CheckShortcut checks typ's environment shortcut: env configures a
// provider that good approves of; env with broken's values ("" unsets) is
// refused naming field; no variable configures none.
func CheckShortcut(t *testing.T, typ provider.Type, env, broken map[string]string, good func(provider.Settings) bool, field string) {
	t.Helper()
	s, ok, err := typ.FromEnv(func(k string) string { return env[k] })
	if !ok || err != nil {
		t.Fatal(ok, err)
	}
	if !good(s) {
		t.Errorf("%+v", s)
	}
	bad := func(k string) string {
		if v, ok := broken[k]; ok {
			return v
		}
		return env[k]
	}
	if _, _, err := typ.FromEnv(bad); err == nil || !strings.Contains(err.Error(), field) {
		t.Errorf("with %v: %v, want it to name %s", broken, err, field)
	}
	if _, ok, _ := typ.FromEnv(func(string) string { return "" }); ok {
		t.Error("configured with no variables")
	}
}

// Names checks that a configuration's Validate error names each of
// fields.
func Names(t *testing.T, err error, fields ...string) {
	t.Helper()
	for _, want := range fields {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to name %s", err, want)
		}
	}
}
