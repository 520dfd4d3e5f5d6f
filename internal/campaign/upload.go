package campaign

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"time"
)

// MaxFieldBytes bounds each form field that comes with the file.
const MaxFieldBytes = 16 << 10

// MaxUpload is the most a whole upload may carry: the file, its fields and
// the form's own boundaries and headers.
const MaxUpload = MaxBytes + 256<<10

// Patience is how long a campaign's request may take, reading the upload
// and writing its messages: far longer than the server's deadlines for
// ordinary requests (a 100,000-row campaign takes tens of seconds to
// write), which Extend lifts for this request alone.
const Patience = 15 * time.Minute

// Extend gives this request Patience to read its body and to answer. A
// server that cannot (an http.ResponseWriter without deadlines) keeps its
// own. Deadlines are the network's, so they follow the real clock.
func Extend(w http.ResponseWriter) {
	now := time.Now()
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(now.Add(Patience))
	_ = rc.SetWriteDeadline(now.Add(Patience))
}

// Upload is a campaign's multipart form, read as it streams in: the file
// spooled to disk, the other fields kept (each at most MaxFieldBytes).
type Upload struct {
	File   *Spool // nil when the form had no file
	Fields map[string]string
}

// Close removes the spooled file.
func (u *Upload) Close() {
	if u.File != nil {
		_ = u.File.Close()
	}
}

// ReadUpload reads a multipart form whose field "file" is the CSV. The
// parts are read in the order they come, so the fields may come before or
// after the file. A second file is refused.
func ReadUpload(ctx context.Context, mr *multipart.Reader, dir string) (*Upload, error) {
	u := &Upload{Fields: map[string]string{}}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return u, nil
		}
		if err != nil {
			u.Close()
			return nil, readError(err)
		}
		name := part.FormName()
		if name == "file" {
			if u.File != nil {
				u.Close()
				return nil, fileError("is given more than once; upload one file per campaign")
			}
			if u.File, err = Read(ctx, part, dir); err != nil {
				u.Close()
				return nil, readError(err)
			}
			continue
		}
		b, err := io.ReadAll(io.LimitReader(part, MaxFieldBytes+1))
		if err != nil {
			u.Close()
			return nil, readError(err)
		}
		if len(b) > MaxFieldBytes {
			u.Close()
			return nil, fieldTooLong(name)
		}
		if name != "" {
			u.Fields[name] = strings.TrimRight(string(b), "\r\n")
		}
	}
}

// readError tells an upload over its size (the request body's limit,
// http.MaxBytesReader) from other failures.
func readError(err error) error {
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return ErrTooLarge
	}
	return err
}

func fieldTooLong(name string) error {
	return fmt.Errorf("%w: field %q is longer than %d bytes", ErrTooLarge, name, MaxFieldBytes)
}
