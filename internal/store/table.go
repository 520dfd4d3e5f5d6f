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

// A table lists its columns once, in its bind function: each column is
// its name and the field of the row it stores, in a stored form (times as
// Unix milliseconds, typed strings as text). Inserts, selects and scans
// are all derived from that list, so adding a column is one entry here
// and one line in a migration.
type table[T any] struct {
	name  string
	bind  func(*T, cols) cols
	names []string // the columns, in order
	list  string   // the column names, comma-separated, in order
	// defaulted[i]: column i's DEFAULT is what its zero value writes, so a
	// multi-row insert in which every row has it zero may leave it out
	// (see insertRows). TestDefaultedColumns checks the schema agrees.
	defaulted []bool
}

// newTable declares a table. bind lists a row's columns, always the same
// ones in the same order (it is called once here for their names, then for
// every row written or read), as return c.add(textCol("id", &v.ID), ...).
func newTable[T any](name string, bind func(*T, cols) cols) table[T] {
	var zero T
	names := bind(&zero, cols{}).names
	return table[T]{name: name, bind: bind, names: names, list: strings.Join(names, ", ")}
}

// cols gathers what a bind function lists for one row: the columns'
// names, the values to write, or where the values read go. It is passed
// and returned by value, so binding a row allocates nothing beyond out.
type cols struct {
	use   colUse
	names []string
	out   []any
}

type colUse int

const (
	colNames colUse = iota
	colArgs
	colDests
)

func (c cols) add(fields ...field) cols {
	for _, f := range fields {
		switch c.use {
		case colArgs:
			c.out = append(c.out, f.form.arg())
		case colDests:
			c.out = append(c.out, f.form.dest())
		default:
			c.names = append(c.names, f.name)
		}
	}
	return c
}

// A field is a column: its name and a row's field in its stored form.
type field struct {
	name string
	form form
}

// A form converts one field to the value stored and back. Every form is a
// pointer to the field (or a struct of one), so making one allocates
// nothing.
type form interface {
	arg() any  // the value to write
	dest() any // where Scan puts the value read
}

// withDefaults marks columns whose DEFAULT is what their zero value
// writes: the empty string for text, 0 for numbers, NULL for a nullable
// column without a DEFAULT. Inserts of fresh rows leave them out, which spares binding a
// parameter per column and row (a new message has a dozen such columns).
func (t table[T]) withDefaults(names ...string) table[T] {
	t.defaulted = make([]bool, len(t.names))
	for _, n := range names {
		i := slices.Index(t.names, n)
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
	return t.bind(v, cols{use: colArgs, out: out}).out
}

// dests returns where each column of a row goes in v, in column order.
func (t table[T]) dests(v *T, out []any) []any {
	return t.bind(v, cols{use: colDests, out: out}).out
}

// insert is the INSERT statement of one row with every column.
func (t table[T]) insert(s *Store) string {
	return `INSERT INTO ` + t.name + ` (` + t.list + `) VALUES (` + s.placeholders(1, len(t.names)) + `)`
}

// scan reads one row selected with t.list; no row is ErrNotFound.
func (t table[T]) scan(row interface{ Scan(...any) error }) (T, error) {
	var v T
	err := row.Scan(t.dests(&v, make([]any, 0, len(t.names)))...)
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
	var out []T
	if err := t.scanEach(rows, err, func(v T) { out = append(out, v) }); err != nil {
		return nil, err
	}
	return out, nil
}

// scanEach reads every row of a query selected with t.list and hands each
// to each in turn. The rows are scanned into one value, zeroed before
// each row, through one set of destinations: building those (a pointer
// per column, boxed) for every row cost more than the copy each gets.
func (t table[T]) scanEach(rows rowsScanner, err error, each func(T)) error {
	if err != nil {
		return fmt.Errorf("query %s: %w", t.name, err)
	}
	defer rows.Close()
	var v T
	dests := t.dests(&v, make([]any, 0, len(t.names)))
	for rows.Next() {
		var zero T
		v = zero
		if err := rows.Scan(dests...); err != nil {
			return fmt.Errorf("scan %s: %w", t.name, err)
		}
		each(v)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("query %s: %w", t.name, err)
	}
	return nil
}

// Column kinds.

// textCol, intCol and int64Col store the value as it is.
func textCol(name string, p *string) field { return field{name, asIs[string]{p}} }

func intCol(name string, p *int) field { return field{name, asIs[int]{p}} }

func int64Col(name string, p *int64) field { return field{name, asIs[int64]{p}} }

type asIs[V any] struct{ p *V }

func (f asIs[V]) arg() any  { return *f.p }
func (f asIs[V]) dest() any { return f.p }

// nullTextCol stores "" as NULL (a reference that may be absent) and reads
// NULL back as "".
func nullTextCol(name string, p *string) field { return field{name, (*nullText)(p)} }

type nullText string

func (p *nullText) arg() any {
	if *p == "" {
		return nil
	}
	return string(*p)
}

func (p *nullText) dest() any { return p }

func (p *nullText) Scan(src any) error {
	return scanNull(src, func(v sql.NullString) { *p = nullText(v.String) })
}

// scanNull scans src as the nullable N (sql.NullString, sql.NullInt64)
// and hands it to set: the scanners below are conversions of it.
func scanNull[N sql.NullInt64 | sql.NullString](src any, set func(N)) error {
	var v N
	var err error
	switch p := any(&v).(type) {
	case *sql.NullInt64:
		*p, err = nullInt64Of(src)
	case *sql.NullString:
		*p, err = nullStringOf(src)
	}
	if err != nil {
		return err
	}
	set(v)
	return nil
}

// nullInt64Of and nullStringOf scan src as database/sql scans it into a
// sql.NullInt64 or sql.NullString. What SQLite's driver and pgx hand over
// for these columns (nothing, an integer, a text) is taken as it is:
// through the types' own Scan the value is kept on the heap, an
// allocation for every nullable column of every row read, and a message
// row has a dozen of them.
func nullInt64Of(src any) (sql.NullInt64, error) {
	switch x := src.(type) {
	case nil:
		return sql.NullInt64{}, nil
	case int64:
		return sql.NullInt64{Int64: x, Valid: true}, nil
	}
	var v sql.NullInt64
	err := v.Scan(src)
	return v, err
}

func nullStringOf(src any) (sql.NullString, error) {
	switch x := src.(type) {
	case nil:
		return sql.NullString{}, nil
	case string:
		return sql.NullString{String: x, Valid: true}, nil
	}
	var v sql.NullString
	err := v.Scan(src)
	return v, err
}

// nullInt64Col stores a nil pointer as NULL (a setting that is off).
func nullInt64Col(name string, p **int64) field { return field{name, nullInt64{p}} }

type nullInt64 struct{ p **int64 }

func (n nullInt64) arg() any {
	if *n.p == nil {
		return nil
	}
	return **n.p
}

func (n nullInt64) dest() any { return n }

func (n nullInt64) Scan(src any) error {
	return scanNull(src, func(v sql.NullInt64) {
		*n.p = nil
		if v.Valid {
			x := v.Int64
			*n.p = &x
		}
	})
}

// boolCol stores a bool as 0 or 1 (SQLite has no boolean type).
func boolCol(name string, p *bool) field { return field{name, (*intBool)(p)} }

// The scanners below are pointer types converted from the field's own
// pointer, so handing one to Scan allocates nothing: a row of messages has
// seventeen such columns, and rows are scanned on the hot path.

type intBool bool

func (p *intBool) arg() any  { return boolInt(bool(*p)) }
func (p *intBool) dest() any { return p }

func (p *intBool) Scan(src any) error {
	return scanNull(src, func(v sql.NullInt64) { *p = v.Int64 != 0 })
}

// timeCol stores a time as Unix milliseconds; the zero time is NULL.
func timeCol(name string, p *time.Time) field { return field{name, (*msTime)(p)} }

// msCol stores a time as Unix milliseconds in a NOT NULL column; the zero
// time is 0.
func msCol(name string, p *time.Time) field { return field{name, (*msStamp)(p)} }

type msStamp time.Time

func (p *msStamp) arg() any {
	if time.Time(*p).IsZero() {
		return int64(0)
	}
	return ms(time.Time(*p))
}

func (p *msStamp) dest() any { return (*msTime)(p) }

// durationCol stores a duration as whole milliseconds.
func durationCol(name string, p *time.Duration) field { return field{name, (*msDuration)(p)} }

type msDuration time.Duration

func (p *msDuration) arg() any  { return time.Duration(*p).Milliseconds() }
func (p *msDuration) dest() any { return p }

func (p *msDuration) Scan(src any) error {
	return scanNull(src, func(v sql.NullInt64) { *p = msDuration(time.Duration(v.Int64) * time.Millisecond) })
}

// enumCol stores a typed string (status, channel, environment) as text;
// database/sql scans text into any string type.
func enumCol[E ~string](name string, p *E) field { return field{name, enumText[E]{p}} }

type enumText[E ~string] struct{ p *E }

func (f enumText[E]) arg() any  { return string(*f.p) }
func (f enumText[E]) dest() any { return f.p }

// listCol stores a list of strings as one comma-separated text.
func listCol(name string, p *[]string) field { return field{name, (*commaList)(p)} }

type commaList []string

func (p *commaList) arg() any  { return strings.Join(*p, ",") }
func (p *commaList) dest() any { return p }

func (p *commaList) Scan(src any) error {
	return scanNull(src, func(v sql.NullString) { *p = splitComma(v.String) })
}

// jsonCol stores a value as JSON text.
func jsonCol[V any](name string, p *V) field { return field{name, jsonScanner[V]{p}} }

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

func (s jsonScanner[V]) arg() any  { return jsonText(s.p) }
func (s jsonScanner[V]) dest() any { return s }

func (s jsonScanner[V]) Scan(src any) error {
	v, err := nullStringOf(src)
	if err != nil {
		return err
	}
	if !v.Valid || v.String == "" {
		return nil
	}
	return json.Unmarshal([]byte(v.String), s.p)
}

type msTime time.Time

// arg is NULL or the milliseconds themselves: a sql.NullInt64 would be
// boxed, then converted through its Value on its way to the driver.
func (p *msTime) arg() any { return msOrNil(time.Time(*p)) }

func (p *msTime) dest() any { return p }

func (p *msTime) Scan(src any) error {
	return scanNull(src, func(v sql.NullInt64) { *p = msTime(fromMS(v)) })
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
func contentCol(name string, p *domain.Content) field { return field{name, (*contentJSON)(p)} }

type contentJSON domain.Content

func (p *contentJSON) arg() any  { return domain.Content(*p).Encode() }
func (p *contentJSON) dest() any { return p }

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
