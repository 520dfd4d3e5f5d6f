package app

import (
	"runtime"
	"runtime/debug"

	"github.com/msgsvc/msgsvc/internal/store"
)

// Version is msgsvc's version; release builds set it with
// -ldflags "-X msgsvc/internal/app.Version=1.2.3".
var Version = "0.5.0-dev"

// VersionInfo describes this binary: its version, the source revision it
// was built from (when the build recorded it) and the Go version.
func VersionInfo() map[string]string {
	out := map[string]string{"version": Version, "go": runtime.Version(), "sqlite": store.SQLiteDriverName}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				out["revision"] = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					out["modified"] = "true"
				}
			}
		}
	}
	return out
}
