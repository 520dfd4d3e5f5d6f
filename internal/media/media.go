// Package media stores the files integrators upload for WhatsApp and RCS
// sends and knows the channels' rules for them.
//
// Uploads are streamed to disk under a size cap, typed by their content
// (never by what the client claims), and kept content-addressed:
// <dir>/ab/cd/<sha256>. A database row per account and file is what lets an
// account use a mediaId; another account's id is not found. The same bytes
// uploaded twice by one account give the same mediaId.
package media

import (
	"errors"
	"fmt"
	"github.com/msgsvc/msgsvc/internal/domain"
)

// Kind is the broad class of a file; the channel limits are per kind.
type Kind string

const (
	Image    Kind = "image"
	Video    Kind = "video"
	Document Kind = "document"
)

// Sizes. The contract's "MB" is 2^20 bytes (the API document's maximum size
// is 10485760).
const (
	MB            = 1 << 20
	MaxSize       = 10 * MB // the largest upload, and the video and document limit
	MaxImageSize  = 5 * MB
	maxVideoSize  = MaxSize
	maxDocSize    = MaxSize
	maxHeadLength = 4096 // bytes read to recognise a type
)

// Type is a file type this service accepts on some channel.
type Type struct {
	MIME string
	Kind Kind
	Name string // how people call it, for error messages: "JPG", "DOCX"
}

// The accepted types. Plain text is deliberately absent: it cannot be told
// apart from any other bytes reliably, and no channel needs it as media.
var (
	JPEG = Type{"image/jpeg", Image, "JPG"}
	PNG  = Type{"image/png", Image, "PNG"}
	GIF  = Type{"image/gif", Image, "GIF"}
	MP4  = Type{"video/mp4", Video, "MP4"}
	GPP  = Type{"video/3gpp", Video, "3GPP"}
	PDF  = Type{"application/pdf", Document, "PDF"}
	DOC  = Type{"application/msword", Document, "DOC"}
	XLS  = Type{"application/vnd.ms-excel", Document, "XLS"}
	PPT  = Type{"application/vnd.ms-powerpoint", Document, "PPT"}
	DOCX = Type{"application/vnd.openxmlformats-officedocument.wordprocessingml.document", Document, "DOCX"}
	XLSX = Type{"application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", Document, "XLSX"}
	PPTX = Type{"application/vnd.openxmlformats-officedocument.presentationml.presentation", Document, "PPTX"}
)

// Types lists every accepted type.
func Types() []Type { return []Type{JPEG, PNG, GIF, MP4, GPP, PDF, DOC, XLS, PPT, DOCX, XLSX, PPTX} }

// TypeOf finds an accepted type by MIME type.
func TypeOf(mime string) (Type, bool) {
	for _, t := range Types() {
		if t.MIME == mime {
			return t, true
		}
	}
	return Type{}, false
}

// Item is a stored file as one account sees it.
type Item struct {
	ID        string
	AccountID string
	SHA256    string
	MIME      string
	Kind      Kind
	Size      int64
}

func itemFrom(m domain.MediaFile) Item {
	return Item{ID: m.ID, AccountID: m.AccountID, SHA256: m.SHA256, MIME: m.MIME, Kind: Kind(m.Kind), Size: m.Size}
}

// Errors of uploads and look-ups.
var (
	// ErrTooLarge: the upload is over MaxSize. Every size refusal matches
	// it with errors.Is.
	ErrTooLarge error = tooLarge{"file", MaxSize}
	// ErrImageTooLarge: an image over MaxImageSize, which no channel sends.
	ErrImageTooLarge error = tooLarge{"image", MaxImageSize}
	// ErrEmpty: the upload has no bytes.
	ErrEmpty = errors.New("file is empty")
	// ErrUnsupported is wrapped by the error for content that is no
	// accepted type; the error's text says what is accepted.
	ErrUnsupported = errors.New("unsupported media type")
	// ErrNotFound is also domain.ErrNotFound, so the API layer answers 404
	// when it is returned unchanged.
	ErrNotFound error = notFound{}
)

type tooLarge struct {
	what  string
	limit int64
}

func (e tooLarge) Error() string {
	return fmt.Sprintf("%s is larger than %d MB (%d bytes)", e.what, e.limit/MB, e.limit)
}
func (e tooLarge) Is(target error) bool { return target == ErrTooLarge }

type notFound struct{}

func (notFound) Error() string        { return "no such media in this account" }
func (notFound) Is(target error) bool { return target == domain.ErrNotFound }
