package cli

import (
	"encoding/json"
	"fmt"
	"io"
)

func runVersion(node Node, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("msgsvc version", stdout, stderr, "msgsvc version — the version of this binary, its source revision and Go version",
		"msgsvc version --json")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	info := node.VersionInfo()
	if *asJSON {
		return json.NewEncoder(stdout).Encode(info)
	}
	rev := ""
	if r := info["revision"]; r != "" {
		rev = " (" + r[:min(12, len(r))] + ")"
	}
	_, err := fmt.Fprintf(stdout, "msgsvc %s%s %s, SQLite by %s\n", info["version"], rev, info["go"], info["sqlite"])
	return err
}
