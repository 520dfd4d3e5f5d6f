package app

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/phone"
)

// The recipients written in the documents' examples: "to" and
// "recipients" in JSON, --to on the command line.
var (
	docToRe         = regexp.MustCompile(`"to"\s*:\s*"([^"]*)"`)
	docRecipientsRe = regexp.MustCompile(`"recipients"\s*:\s*\[([^\]]*)\]`)
	docQuotedRe     = regexp.MustCompile(`"([^"]*)"`)
	docFlagToRe     = regexp.MustCompile(`--to[ =]["']?([+0-9][^"'\s]*)`)
	docNumberLike   = regexp.MustCompile(`^\+?[0-9]+$`)
)

// examplePhoneProblems checks that every recipient number in the examples
// of README.md and docs/*.md is one msgsvc accepts, with the API's own
// validation (a leading + allowed): a reader copies them. Values that are
// not numbers (placeholders such as "..." or $PHONE) are left alone.
func examplePhoneProblems(root string, files []string) ([]string, error) {
	var problems []string
	for _, f := range files {
		raw, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			return nil, err
		}
		for i, line := range strings.Split(string(raw), "\n") {
			var values []string
			for _, m := range docToRe.FindAllStringSubmatch(line, -1) {
				values = append(values, m[1])
			}
			for _, m := range docRecipientsRe.FindAllStringSubmatch(line, -1) {
				for _, q := range docQuotedRe.FindAllStringSubmatch(m[1], -1) {
					values = append(values, q[1])
				}
			}
			for _, m := range docFlagToRe.FindAllStringSubmatch(line, -1) {
				values = append(values, m[1])
			}
			for _, v := range values {
				if !docNumberLike.MatchString(v) {
					continue
				}
				if _, err := phone.Parse(strings.TrimPrefix(v, "+")); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: %q: %v", f, i+1, v, err))
				}
			}
		}
	}
	return problems, nil
}

func checkExamplePhones(t *testing.T, root string, files []string) {
	t.Helper()
	problems, err := examplePhoneProblems(root, files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("an example's number is refused by msgsvc: %s", p)
	}
}
