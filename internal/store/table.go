package store

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// A table lists its columns once: each column knows its name, the value it
// writes and where a scanned value goes. Inserts, selects and scans are
// all derived from the list, so adding a column is one line here and one
// in a migration. Values are converted to the stored forms (times as Unix
// milliseconds, typed strings as text) on the way in and out.
type table[T any] struct {
	name string
	cols []column[T]
	list string // the column names, comma-separated, in order
	// defaulted[i]: column i's DEFAULT is what its zero value writes, so a
	// multi-row insert in which every row has it zero may leave it out
	// (see insertRows). TestDefaultedColumns checks the schema agrees.
	defaulted []bool
}

type column[T any] struct {
	name string
	arg  func(*T) any // the value to write
	dest func(*T) any // where Scan puts the value read
}

func newTable[T any](name string, cols ...column[T]) table[T] {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.name
	}
	return table[T]{name: name, cols: cols, list: strings.Join(names, ", ")}
}

// withDefaults marks columns whose DEFAULT is what their zero value
// writes: the empty string for text, 0 for numbers, NULL for a nullable
// column without a DEFAULT. Inserts of fresh rows leave them out, which spares binding a
// parameter per column and row (a new message has a dozen such columns).
func (t table[T]) withDefaults(names ...string) table[T] {
	t.defaulted = make([]bool, len(t.cols))
	for _, n := range names {
		i := slices.IndexFunc(t.cols, func(c column[T]) bool { return c.name == n })
		if i < 0 {
			panic("store: " + t.name + " has no column " + n)
		}
		t.defaulted[i] = true
	}
	return t
}

// zeroArg tells whether a column value is what a DEFAULT of the empty
// string, 0 or NULL writes.
func zeroArg(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case int:
		return x == 0
	case int64:
		return x == 0
	case sql.NullInt64:
		return !x.Valid
	case sql.NullString:
		return !x.Valid
	}
	return false
}

// args returns v's column values, in column order.
func (t table[T]) args(v *T, out []any) []any {
	for _, c := range t.cols {
		out = append(out, c.arg(v))
	}
	return out
}

// dests returns where each column of a row goes in v, in column order.
func (t table[T]) dests(v *T, out []any) []any {
	for _, c := range t.cols {
		out = append(out, c.dest(v))
	}
	return out
}

// insert is the INSERT statement of one row with every column.
func (t table[T]) insert(s *Store) string {
	return `INSERT INTO ` + t.name + ` (` + t.list + `) VALUES (` + s.placeholders(1, len(t.cols)) + `)`
}

// scan reads one row selected with t.list; no row is ErrNotFound.
func (t table[T]) scan(row interface{ Scan(...any) error }) (T, error) {
	var v T
	err := row.Scan(t.dests(&v, make([]any, 0, len(t.cols)))...)
	if errors.Is(err, sql.ErrNoRows) {
		return v, domain.ErrNotFound
	}
	if err != nil {
		return v, fmt.Errorf("scan %s: %w", t.name, err)
	}
	return v, nil
}

// scanAll reads every row of a query selected with t.list.
func (t table[T]) scanAll(rows rowsScanner, err error) ([]T, error) {
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", t.name, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := t.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("query %s: %w", t.name, err)
	}
	return out, nil
}

// Column kinds.

func textCol[T any](name string, f func(*T) *string) column[T] {
	return column[T]{name, func(v *T) any { return *f(v) }, func(v *T) any { return f(v) }}
}

// nullTextCol stores "" as NULL (a reference that may be absent) and reads
// NULL back as "".
func nullTextCol[T any](name string, f func(*T) *string) column[T] {
	return column[T]{name, func(v *T) any {
		if *f(v) == "" {
			return nil
		}
		return *f(v)
	}, func(v *T) any { return (*nullText)(f(v)) }}
}

type nullText string

func (p *nullText) Scan(src any) error {
	var v sql.NullString
	if err := v.Scan(src); err != nil {
		return err
	}
	*p = nullText(v.String)
	return nil
}

func intCol[T any](name string, f func(*T) *int) column[T] {
	return column[T]{name, func(v *T) any { return *f(v) }, func(v *T) any { return f(v) }}
}

func int64Col[T any](name string, f func(*T) *int64) column[T] {
	return column[T]{name, func(v *T) any { return *f(v) }, func(v *T) any { return f(v) }}
}

// boolCol stores a bool as 0 or 1 (SQLite has no boolean type).
// nullInt64Col stores a nil pointer as NULL (a setting that is off).
func nullInt64Col[T any](name string, f func(*T) **int64) column[T] {
	return column[T]{name, func(v *T) any {
		if *f(v) == nil {
			return nil
		}
		return **f(v)
	}, func(v *T) any { return nullInt64{f(v)} }}
}

type nullInt64 struct{ p **int64 }

func (n nullInt64) Scan(src any) error {
	var v sql.NullInt64
	if err := v.Scan(src); err != nil {
		return err
	}
	*n.p = nil
	if v.Valid {
		x := v.Int64
		*n.p = &x
	}
	return nil
}

func boolCol[T any](name string, f func(*T) *bool) column[T] {
	return column[T]{name, func(v *T) any { return boolInt(*f(v)) }, func(v *T) any { return (*intBool)(f(v)) }}
}

// The scanners below are pointer types converted from the field's own
// pointer, so handing one to Scan allocates nothing: a row of messages has
// seventeen such columns, and rows are scanned on the hot path.

type intBool bool

func (p *intBool) Scan(src any) error {
	var v sql.NullInt64
	if err := v.Scan(src); err != nil {
		return err
	}
	*p = v.Int64 != 0
	return nil
}

// timeCol stores a time as Unix milliseconds; the zero time is NULL.
func timeCol[T any](name string, f func(*T) *time.Time) column[T] {
	return column[T]{name, func(v *T) any { return nullMS(*f(v)) }, func(v *T) any { return (*msTime)(f(v)) }}
}

// msCol stores a time as Unix milliseconds in a NOT NULL column; the zero
// time is 0.
func msCol[T any](name string, f func(*T) *time.Time) column[T] {
	return column[T]{name, func(v *T) any {
		if f(v).IsZero() {
			return int64(0)
		}
		return ms(*f(v))
	}, func(v *T) any { return (*msTime)(f(v)) }}
}

// durationCol stores a duration as whole milliseconds.
func durationCol[T any](name string, f func(*T) *time.Duration) column[T] {
	return column[T]{name, func(v *T) any { return f(v).Milliseconds() }, func(v *T) any { return (*msDuration)(f(v)) }}
}

type msDuration time.Duration

func (p *msDuration) Scan(src any) error {
	var v sql.NullInt64
	if err := v.Scan(src); err != nil {
		return err
	}
	*p = msDuration(time.Duration(v.Int64) * time.Millisecond)
	return nil
}

// enumCol stores a typed string (status, channel, environment) as text;
// database/sql scans text into any string type.
func enumCol[T any, E ~string](name string, f func(*T) *E) column[T] {
	return column[T]{name, func(v *T) any { return string(*f(v)) }, func(v *T) any { return f(v) }}
}

// listCol stores a list of strings as one comma-separated text.
func listCol[T any](name string, f func(*T) *[]string) column[T] {
	return column[T]{name, func(v *T) any { return strings.Join(*f(v), ",") }, func(v *T) any { return (*commaList)(f(v)) }}
}

type commaList []string

func (p *commaList) Scan(src any) error {
	var v sql.NullString
	if err := v.Scan(src); err != nil {
		return err
	}
	*p = splitComma(v.String)
	return nil
}

// jsonCol stores a value as JSON text.
func jsonCol[T, V any](name string, f func(*T) *V) column[T] {
	return column[T]{name, func(v *T) any { return jsonText(f(v)) }, func(v *T) any { return jsonScanner[V]{f(v)} }}
}

// jsonText encodes plain data (maps, slices and structs of strings and
// numbers), which cannot fail.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("store: encode %T: %v", v, err))
	}
	return string(b)
}

type jsonScanner[V any] struct{ p *V }

func (s jsonScanner[V]) Scan(src any) error {
	var v sql.NullString
	if err := v.Scan(src); err != nil {
		return err
	}
	if !v.Valid || v.String == "" {
		return nil
	}
	return json.Unmarshal([]byte(v.String), s.p)
}

type msTime time.Time

func (p *msTime) Scan(src any) error {
	var v sql.NullInt64
	if err := v.Scan(src); err != nil {
		return err
	}
	*p = msTime(fromMS(v))
	return nil
}

// lit quotes a typed constant (a status, a channel) for the few statements
// that must name one literally: a partial index is used only when the
// query repeats its predicate word for word. It is the one place where
// such values enter SQL text.
func lit[E ~string](v E) string {
	return "'" + strings.ReplaceAll(string(v), "'", "''") + "'"
}

// contentCol stores a message's rich content as JSON ("" for plain text)
// and decodes it once, on the way out.
func contentCol[T any](name string, f func(*T) *domain.Content) column[T] {
	return column[T]{name, func(v *T) any { return f(v).Encode() }, func(v *T) any { return (*contentJSON)(f(v)) }}
}

type contentJSON domain.Content

func (p *contentJSON) Scan(src any) error {
	var text string
	switch v := src.(type) {
	case nil:
	case string:
		text = v
	case []byte:
		text = string(v)
	default:
		return fmt.Errorf("content: unexpected %T", src)
	}
	c, err := domain.DecodeContent(text)
	if err != nil {
		return err
	}
	*p = contentJSON(c)
	return nil
}

// seq is the column that orders a table's rows as they were written: the
// rowid on SQLite (max+1 at each insert, across processes), a BIGSERIAL on
// PostgreSQL. Ids carry a millisecond timestamp and random bits, so two
// rows written in the same millisecond would sort at random by id.
func (s *Store) seq() string {
	if s.dialect == SQLite {
		return "rowid"
	}
	return "seq"
}
