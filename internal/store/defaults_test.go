package store_test

import (
	"context"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/store"
)

// Inserts leave a defaulted column out when every row has it zero, so its
// DEFAULT must write exactly that zero, in both dialects: the empty string
// for text, 0 for numbers, NULL (no DEFAULT, NULL allowed) for the
// NULL-able columns.
// A migration that changed one of those defaults would fail here rather
// than change what new rows hold.
func TestDefaultedColumns(t *testing.T) {
	eachStore(t, func(t *testing.T, ctx context.Context, st *store.Store) {
		cols := store.DefaultedColumns()
		if len(cols) < 20 {
			t.Fatalf("only %d defaulted columns: the list is not what this test expects", len(cols))
		}
		for _, c := range cols {
			query := `SELECT COALESCE(dflt_value, 'none') || ' ' || CASE WHEN "notnull" = 1 THEN 'not-null' ELSE 'nullable' END
				FROM pragma_table_info($1) WHERE name = $2`
			if st.Dialect() == store.Postgres {
				query = `SELECT COALESCE(column_default, 'none') || ' ' || CASE WHEN is_nullable = 'NO' THEN 'not-null' ELSE 'nullable' END
					FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2`
			}
			got, err := st.QueryStrings(ctx, query, c.Table, c.Column)
			if err != nil || len(got) != 1 {
				t.Fatalf("%s.%s: %v, %v", c.Table, c.Column, got, err)
			}
			dflt, nullness, _ := strings.Cut(got[0], " ")
			dflt = strings.TrimSuffix(dflt, "::text") // PostgreSQL: ''::text
			var ok bool
			switch c.Zero {
			case "text":
				ok = dflt == "''" && nullness == "not-null"
			case "number":
				ok = dflt == "0" && nullness == "not-null"
			case "null":
				ok = (dflt == "none" || strings.EqualFold(dflt, "NULL")) && nullness == "nullable"
			}
			if !ok {
				t.Errorf("%s.%s: default %s, %s; its zero value is %s", c.Table, c.Column, dflt, nullness, c.Zero)
			}
		}
	})
}
