package app

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
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

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("msgsvc version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = usageOf(fs, stdout, "msgsvc version — the version of this binary, its source revision and Go version", "msgsvc version --json")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	info := VersionInfo()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(info)
	}
	rev := ""
	if r := info["revision"]; r != "" {
		rev = " (" + r[:min(12, len(r))] + ")"
	}
	_, err := fmt.Fprintf(stdout, "msgsvc %s%s %s, SQLite by %s\n", Version, rev, info["go"], info["sqlite"])
	return err
}
