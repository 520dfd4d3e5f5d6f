package store

import (
	"context"
	"database/sql"
	"fmt"
	"reflect"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// TestWriterScansAsDatabaseSQLScans: a value read by the writer's own
// query path lands in each kind of destination as database/sql puts it
// there (or is refused where database/sql refuses it).
func TestWriterScansAsDatabaseSQLScans(t *testing.T) {
	s := numbersStore(t)
	ctx := context.Background()
	values := []string{`'text'`, `'42'`, `42`, `-7`, `3.5`, `0`, `1`, `NULL`, `x'00ff'`, `'live'`, `300`}
	type enum string
	dests := []func() any{
		func() any { return new(string) }, func() any { return new(int64) }, func() any { return new(int) },
		func() any { return new(float64) }, func() any { return new(bool) }, func() any { return new([]byte) },
		func() any { return new(any) }, func() any { return new(domain.Environment) }, func() any { return new(enum) },
		func() any { return new(int32) }, func() any { return new(uint8) }, func() any { return new(*string) },
		func() any { return new(*int64) }, func() any { return new(sql.NullString) }, func() any { return new(sql.NullInt64) },
		func() any { return new(float32) },
	}
	for _, v := range values {
		for _, mk := range dests {
			want, wantErr := mk(), error(nil)
			wantErr = s.r.QueryRowContext(ctx, "SELECT "+v).Scan(want)
			got, gotErr := mk(), error(nil)
			err := s.Write(ctx, func(tx *Tx) error {
				gotErr = tx.queryRow(ctx, "SELECT "+v).Scan(got)
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("%s into %T", v, want)
			if (wantErr == nil) != (gotErr == nil) {
				t.Errorf("%s: database/sql's error %v, the writer's %v", name, wantErr, gotErr)
				continue
			}
			if wantErr == nil && !reflect.DeepEqual(got, want) {
				t.Errorf("%s: the writer read %#v, database/sql %#v", name, reflect.ValueOf(got).Elem(), reflect.ValueOf(want).Elem())
			}
		}
	}
}

// TestWriterQueryRowsInOrder: the writer's queries give every row, in
// order, and report no row as sql.ErrNoRows to a single-row read.
func TestWriterQueryRowsInOrder(t *testing.T) {
	s := numbersStore(t)
	ctx := context.Background()
	for n := range 5 {
		if err := insertNumber(ctx, s, n*10); err != nil {
			t.Fatal(err)
		}
	}
	var got []int
	var none error
	if err := s.Write(ctx, func(tx *Tx) error {
		var n int
		if err := rowsOf(tx.query(ctx, `SELECT n FROM numbers WHERE n >= $1 ORDER BY n`, 10)).scan([]any{&n}, func() {
			got = append(got, n)
		}); err != nil {
			return err
		}
		none = tx.queryRow(ctx, `SELECT n FROM numbers WHERE n < 0`).Scan(&n)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, []int{10, 20, 30, 40}) {
		t.Errorf("rows %v, want 10 20 30 40", got)
	}
	if none != sql.ErrNoRows {
		t.Errorf("a read of no row: %v, want sql.ErrNoRows", none)
	}
}
