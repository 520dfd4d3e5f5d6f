package store_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestZZPlaceholderTiming(t *testing.T) {
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "x.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE x (a INTEGER)`); err != nil {
		t.Fatal(err)
	}
	for _, mark := range []string{"$", "?"} {
		for _, n := range []int{3300, 13200} {
			var b strings.Builder
			args := make([]any, n)
			b.WriteString("INSERT INTO x (a) VALUES ")
			for i := 0; i < n; i++ {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "(%s%d)", mark, i+1)
				args[i] = int64(i)
			}
			start := time.Now()
			if _, err := db.Exec(b.String(), args...); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s x %d: %v", mark, n, time.Since(start))
		}
	}
}
