// Package campaign reads a campaign's recipients from an uploaded CSV file
// and fills its text template per recipient. An upload is copied, row by
// row, to a temporary file as it streams in (Spool), so that however large
// the file, memory holds one row at a time; the rows are then read back in
// chunks as often as the send needs them.
package campaign

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/csv"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/msgsvc/msgsvc/internal/domain"
)

// Limits of an upload.
const (
	// MaxRows is the most recipients one file may name.
	MaxRows = 100_000
	// MaxBytes is the largest file accepted (a 100,000-row file with a
	// few variables is well under it).
	MaxBytes = 32 << 20
	// MaxColumns bounds the header: the recipient and the variables.
	MaxColumns = 50
	// MaxField bounds one cell, so that one row cannot hold the memory a
	// whole file is not allowed to.
	MaxField = 2000
)

// Errors of reading an upload.
var (
	// ErrTooManyRows: the file names more than MaxRows recipients.
	ErrTooManyRows = errors.New("too many rows")
	// ErrTooLarge: the file is larger than MaxBytes.
	ErrTooLarge = errors.New("file too large")
)

// Row is one recipient of a file: its line in the file (the header is
// line 1), its number as written and the variables of its columns.
type Row struct {
	Line int
	To   string
	Vars map[string]string
}

// Spool is an uploaded CSV file, parsed and kept on disk.
type Spool struct {
	f       *os.File
	columns []string // the header, trimmed; To is the recipient's column
	to      int
	rows    int
	sum     []byte
}

// Read copies a CSV upload from r into a temporary file in dir ("" for the
// system's), checking its shape as it goes: a header naming a "to" column
// (any case), at most MaxColumns columns, MaxRows rows and MaxBytes bytes.
// Blank lines are skipped. The file's SHA-256 (of the bytes as uploaded)
// names the upload for idempotency. A file that is not CSV is a
// *domain.ValidationError on "file" naming the line; the limits are
// ErrTooManyRows and ErrTooLarge.
func Read(ctx context.Context, r io.Reader, dir string) (*Spool, error) {
	f, err := os.CreateTemp(dir, "msgsvc-campaign-*.csv")
	if err != nil {
		return nil, fmt.Errorf("spool campaign file: %w", err)
	}
	// The file is removed at once: it lives as long as the descriptor and
	// is never left behind by a crash.
	_ = os.Remove(f.Name())
	s := &Spool{f: f}
	if err := s.fill(ctx, r); err != nil {
		_ = f.Close()
		return nil, err
	}
	return s, nil
}

// countingReader counts and hashes what it reads and stops past max bytes.
type countingReader struct {
	r   io.Reader
	n   int64
	max int64
	h   hash.Hash
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	c.h.Write(p[:n])
	if c.n > c.max {
		return n, ErrTooLarge
	}
	return n, err
}

func (s *Spool) fill(ctx context.Context, r io.Reader) error {
	cr := &countingReader{r: r, max: MaxBytes, h: sha256.New()}
	in := csv.NewReader(bufio.NewReader(cr))
	in.FieldsPerRecord = -1
	in.ReuseRecord = true
	out := bufio.NewWriter(s.f)
	w := csv.NewWriter(out)
	header := true
	for {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, ErrTooLarge) || cr.n > MaxBytes {
			return ErrTooLarge
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return fileError("line %d is not valid CSV: %v", pe.StartLine, pe.Err)
			}
			return fmt.Errorf("read campaign file: %w", err)
		}
		line, _ := in.FieldPos(0)
		if header {
			if err := s.header(rec); err != nil {
				return err
			}
			header = false
			continue
		}
		if blank(rec) {
			continue
		}
		if s.rows == MaxRows {
			return ErrTooManyRows
		}
		if s.rows%1000 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		s.rows++
		// A row keeps its line and exactly the header's columns: missing
		// cells are empty, extra ones an error of that row, kept for it.
		cells := make([]string, 0, len(s.columns)+2)
		cells = append(cells, strconv.Itoa(line), "")
		if len(rec) > len(s.columns) {
			cells[1] = fmt.Sprintf("has %d cells; the header names %d columns", len(rec), len(s.columns))
		}
		for i := range s.columns {
			v := ""
			if i < len(rec) {
				v = rec[i]
			}
			if utf8.RuneCountInString(v) > MaxField && cells[1] == "" {
				cells[1] = fmt.Sprintf("column %q is longer than %d characters", s.columns[i], MaxField)
			}
			if len(v) > 4*MaxField {
				v = v[:4*MaxField]
			}
			cells = append(cells, v)
		}
		if err := w.Write(cells); err != nil {
			return fmt.Errorf("spool campaign file: %w", err)
		}
	}
	if header {
		return fileError("is empty: the first line must name the columns, one of them \"to\"")
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return fmt.Errorf("spool campaign file: %w", err)
	}
	s.sum = cr.h.Sum(nil)
	return nil
}

func blank(rec []string) bool {
	for _, v := range rec {
		if strings.TrimSpace(v) != "" {
			return false
		}
	}
	return true
}

func (s *Spool) header(rec []string) error {
	if len(rec) > MaxColumns {
		return fileError("has %d columns; at most %d are allowed", len(rec), MaxColumns)
	}
	s.to = -1
	seen := map[string]bool{}
	for i, v := range rec {
		name := strings.TrimSpace(strings.TrimPrefix(v, "\ufeff"))
		if i == 0 {
			name = strings.TrimSpace(strings.TrimPrefix(name, "\ufeff"))
		}
		if name == "" {
			return fileError("column %d of the header has no name", i+1)
		}
		if !validName(name) {
			return fileError("column %q: names are letters, digits, _ and -", name)
		}
		key := strings.ToLower(name)
		if seen[key] {
			return fileError("names column %q twice", name)
		}
		seen[key] = true
		if key == "to" {
			s.to = i
			name = "to"
		}
		s.columns = append(s.columns, name)
	}
	if s.to < 0 {
		return fileError("has no \"to\" column: the header must name the recipients' column \"to\"")
	}
	return nil
}

func validName(n string) bool {
	for _, c := range n {
		if !(c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			return false
		}
	}
	return len(n) <= 64
}

func fileError(format string, a ...any) *domain.ValidationError {
	msg := fmt.Sprintf(format, a...)
	return &domain.ValidationError{Detail: "file " + msg, Fields: []domain.FieldError{{Field: "file", Message: msg}}}
}

// Rows is the number of recipients' rows.
func (s *Spool) Rows() int { return s.rows }

// Variables are the header's columns other than "to", as written.
func (s *Spool) Variables() []string {
	out := make([]string, 0, len(s.columns))
	for i, c := range s.columns {
		if i != s.to {
			out = append(out, c)
		}
	}
	return out
}

// Sum is the SHA-256 of the file as uploaded.
func (s *Spool) Sum() []byte { return s.sum }

// Close removes the spooled file.
func (s *Spool) Close() error { return s.f.Close() }

// Chunk is a run of rows read back; Problem, when set, is a row's own
// problem with its shape (too many cells, a cell too long).
type Chunk []SpooledRow

// SpooledRow is a row with the problem its shape has, if any.
type SpooledRow struct {
	Row
	Problem string
}

// Each reads the rows back in order, n at a time, calling fn with each
// run; the slice is reused between calls. It may be called again.
func (s *Spool) Each(ctx context.Context, n int, fn func(Chunk) error) error {
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("read spooled campaign file: %w", err)
	}
	in := csv.NewReader(bufio.NewReader(s.f))
	in.FieldsPerRecord = len(s.columns) + 2
	chunk := make(Chunk, 0, n)
	for {
		rec, err := in.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return fmt.Errorf("read spooled campaign file: %w", err)
		}
		line, _ := strconv.Atoi(rec[0])
		row := SpooledRow{Row: Row{Line: line, Vars: make(map[string]string, len(s.columns))}, Problem: rec[1]}
		for i, c := range s.columns {
			v := rec[i+2]
			if i == s.to {
				row.To = strings.TrimSpace(v)
				continue
			}
			row.Vars[c] = v
		}
		chunk = append(chunk, row)
		if len(chunk) == n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(chunk); err != nil {
				return err
			}
			chunk = chunk[:0]
		}
	}
	if len(chunk) > 0 {
		return fn(chunk)
	}
	return nil
}
