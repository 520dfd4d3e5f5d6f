package store

import (
	"bytes"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"
)

// liteRows are the rows of one of SQLite's writer's queries, read from the
// driver at once (sqliteWriter.query) and scanned as database/sql's Rows
// scan them, for the destinations the store uses.
type liteRows struct {
	cols []string
	vals []driver.Value // every row's values, one row after another
	at   int            // the current row's first value; -1 before the first
	err  error          // a Scan's error, which Err then reports too
}

// read takes every row of rows and closes them. The rows are read into
// scratch, which the caller keeps for its next query, and copied into a
// slice of their exact size.
func (r *liteRows) read(rows driver.Rows, scratch *[]driver.Value) (err error) {
	defer func() {
		if cerr := rows.Close(); err == nil {
			err = cerr
		}
	}()
	r.cols = rows.Columns()
	r.at = -len(r.cols)
	n := len(r.cols)
	if n == 0 {
		return nil
	}
	vals := (*scratch)[:0]
	defer func() {
		clear(vals)
		*scratch = vals[:0]
	}()
	for {
		vals = append(vals, make([]driver.Value, n)...)
		if err := rows.Next(vals[len(vals)-n:]); err != nil {
			vals = vals[:len(vals)-n]
			if !errors.Is(err, io.EOF) {
				return err
			}
			r.vals = append([]driver.Value(nil), vals...)
			return nil
		}
	}
}

func (r *liteRows) Next() bool {
	if r.err != nil || len(r.cols) == 0 || r.at+len(r.cols) >= len(r.vals) {
		r.at = len(r.vals)
		return false
	}
	r.at += len(r.cols)
	return true
}

func (r *liteRows) Scan(dest ...any) error {
	if r.at < 0 || r.at >= len(r.vals) {
		return errors.New("sql: Scan called without calling Next")
	}
	if len(dest) != len(r.cols) {
		return fmt.Errorf("sql: expected %d destination arguments in Scan, not %d", len(r.cols), len(dest))
	}
	for i, d := range dest {
		if err := assign(d, r.vals[r.at+i]); err != nil {
			r.err = fmt.Errorf("sql: Scan error on column index %d, name %q: %w", i, r.cols[i], err)
			return r.err
		}
	}
	return nil
}

func (r *liteRows) Close() error { return nil }

func (r *liteRows) Err() error { return r.err }

// assign stores src, a value of SQLite's driver, in dest, as database/sql
// would for the destinations the store scans into: a sql.Scanner takes
// the value as it is; strings, integers, floats, booleans, bytes, times
// and interfaces convert as database/sql converts them. Any other
// destination is refused (database/sql would reach it by reflection).
func assign(dest, src any) error {
	switch d := dest.(type) {
	case sql.Scanner:
		return d.Scan(src)
	case *string:
		t, ok := asText(src)
		if !ok {
			return unsupported(src, dest)
		}
		*d = t
		return nil
	case *int64:
		n, err := asInt(src, 64)
		if err == nil {
			*d = n
		}
		return err
	case *int:
		n, err := asInt(src, strconv.IntSize)
		if err == nil {
			*d = int(n)
		}
		return err
	case *float64:
		switch s := src.(type) {
		case float64:
			*d = s
		case int64:
			*d = float64(s)
		case string, []byte:
			f, err := strconv.ParseFloat(text(s), 64)
			if err != nil {
				return fmt.Errorf("converting driver.Value type %T (%q) to a float64: %w", src, text(s), err)
			}
			*d = f
		default:
			return unsupported(src, dest)
		}
		return nil
	case *bool:
		v, err := driver.Bool.ConvertValue(src)
		if err == nil {
			*d = v.(bool)
		}
		return err
	case *[]byte:
		switch s := src.(type) {
		case nil:
			*d = nil
		case []byte:
			*d = bytes.Clone(s)
		default:
			t, ok := asText(src)
			if !ok {
				return unsupported(src, dest)
			}
			*d = []byte(t)
		}
		return nil
	case *any:
		if b, ok := src.([]byte); ok {
			src = bytes.Clone(b)
		}
		*d = src
		return nil
	case *time.Time:
		if t, ok := src.(time.Time); ok {
			*d = t
			return nil
		}
		return unsupported(src, dest)
	}
	return assignKind(dest, src)
}

// assignKind stores src in a destination of a type of the store's own
// (an enum of string kind, say), by the kind of the value it points to,
// as database/sql does by reflection; a pointer to a pointer takes NULL
// as nil.
func assignKind(dest, src any) error {
	dp := reflect.ValueOf(dest)
	if dp.Kind() != reflect.Pointer || dp.IsNil() {
		return fmt.Errorf("destination not a pointer: %T", dest)
	}
	dv := dp.Elem()
	if sv := reflect.ValueOf(src); sv.IsValid() && sv.Type().AssignableTo(dv.Type()) {
		if b, ok := src.([]byte); ok {
			sv = reflect.ValueOf(bytes.Clone(b))
		}
		dv.Set(sv)
		return nil
	}
	switch dv.Kind() {
	case reflect.Pointer:
		if src == nil {
			dv.SetZero()
			return nil
		}
		p := reflect.New(dv.Type().Elem())
		if err := assign(p.Interface(), src); err != nil {
			return err
		}
		dv.Set(p)
		return nil
	case reflect.String:
		// Text only: database/sql takes no number into a type of its own.
		switch s := src.(type) {
		case string, []byte:
			dv.SetString(text(s))
			return nil
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := asInt(src, dv.Type().Bits())
		if err == nil {
			dv.SetInt(n)
		}
		return err
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := asInt(src, 64)
		if err == nil && (n < 0 || dv.OverflowUint(uint64(n))) {
			err = fmt.Errorf("converting driver.Value type %T (%d) to a %s: value out of range", src, n, dv.Kind())
		}
		if err == nil {
			dv.SetUint(uint64(n))
		}
		return err
	case reflect.Float32, reflect.Float64:
		var f float64
		if err := assign(&f, src); err != nil {
			return err
		}
		dv.SetFloat(f)
		return nil
	case reflect.Bool:
		var b bool
		if err := assign(&b, src); err != nil {
			return err
		}
		dv.SetBool(b)
		return nil
	}
	return unsupported(src, dest)
}

// asText is a value as text, as database/sql gives it to a string or
// bytes destination: text as it is, numbers and booleans formatted, a
// time in RFC 3339 with nanoseconds. NULL and anything else have none.
func asText(src any) (string, bool) {
	switch s := src.(type) {
	case string:
		return s, true
	case []byte:
		return string(s), true
	case int64:
		return strconv.FormatInt(s, 10), true
	case float64:
		return strconv.FormatFloat(s, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(s), true
	case time.Time:
		return s.Format(time.RFC3339Nano), true
	}
	return "", false
}

// asInt reads an integer as database/sql reads one into an integer
// destination: an int64 as it is, text parsed; NULL is refused.
func asInt(src any, bits int) (int64, error) {
	switch s := src.(type) {
	case int64:
		if bits < 64 && (s > 1<<(bits-1)-1 || s < -1<<(bits-1)) {
			return 0, fmt.Errorf("converting driver.Value type %T (%d) to a int: value out of range", src, s)
		}
		return s, nil
	case string, []byte:
		n, err := strconv.ParseInt(text(s), 10, bits)
		if err != nil {
			return 0, fmt.Errorf("converting driver.Value type %T (%q) to a int: %w", src, text(s), err)
		}
		return n, nil
	case nil:
		return 0, errors.New("converting NULL to int is unsupported")
	}
	return 0, fmt.Errorf("unsupported Scan, storing driver.Value type %T into an integer", src)
}

func text(s any) string {
	if b, ok := s.([]byte); ok {
		return string(b)
	}
	return s.(string)
}

func unsupported(src, dest any) error {
	if src == nil {
		return fmt.Errorf("converting NULL to %T is unsupported", dest)
	}
	return fmt.Errorf("unsupported Scan, storing driver.Value type %T into type %T", src, dest)
}
