package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/message"
)

// maxMultipartOverhead is what the form around the file may add: part
// headers and boundaries, plus small extra fields a client might send.
const maxMultipartOverhead = 64 << 10

var (
	errMediaTooLarge = problem("PAYLOAD_TOO_LARGE",
		fmt.Sprintf("The file is larger than %d MB (%d bytes).", media.MaxSize/media.MB, media.MaxSize))
	errNotMultipart = problem("UNSUPPORTED_MEDIA_TYPE",
		`Send the file as multipart/form-data in the field "file".`)
)

// MediaStore keeps uploads: Ingest streams and checks the file, Register
// files it under the account (or finds the same file filed before).
type MediaStore interface {
	Ingest(ctx context.Context, r io.Reader) (media.Blob, error)
	Register(ctx context.Context, accountID string, b media.Blob) (media.Item, error)
}

type mediaResponse struct {
	MediaID  string `json:"mediaId"`
	MIMEType string `json:"mimeType"`
	Size     int64  `json:"size"`
	SHA256   string `json:"sha256"`
}

// uploadMedia streams the "file" part to the media store. It does not use
// s.idempotent, which buffers a JSON body of at most 1 MiB; it keeps the
// Idempotency-Key promise itself, with the file's SHA-256 standing for the
// body (a retried multipart body may well use another boundary).
func (s *Server) uploadMedia(w http.ResponseWriter, r *http.Request, c message.Caller) error {
	if s.cfg.Media == nil {
		return errNotFound
	}
	idem, err := idempotencyKey(r)
	if err != nil {
		return err
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return errNotMultipart
	}
	if r.ContentLength > media.MaxSize+maxMultipartOverhead {
		return errMediaTooLarge
	}
	body := http.MaxBytesReader(w, r.Body, media.MaxSize+maxMultipartOverhead)
	blob, err := s.ingestFile(r, multipart.NewReader(body, params["boundary"]))
	if err != nil {
		return err
	}

	hash := requestHash(r, []byte("file sha256 "+blob.SHA256))
	if idem != "" {
		if replayed, err := s.replay(w, r, c, idem, hash); replayed || err != nil {
			return err
		}
	}
	it, err := s.cfg.Media.Register(r.Context(), c.Account.ID, blob)
	if err != nil {
		return err
	}
	out, err := json.Marshal(mediaResponse{MediaID: it.ID, MIMEType: it.MIME, Size: it.Size, SHA256: it.SHA256})
	if err != nil {
		return err
	}
	if idem != "" {
		if err := s.cfg.Store.SaveIdempotency(r.Context(), domain.Idempotency{KeyID: c.Key.ID, Key: idem, RequestHash: hash,
			StatusCode: http.StatusCreated, Response: append(out, '\n'), CreatedAt: s.cfg.Now().UTC()}); err != nil {
			return err
		}
	}
	writeRaw(w, http.StatusCreated, append(out, '\n'))
	return nil
}

// ingestFile finds the "file" part and stores it; other fields are
// skipped. A second file is refused: taking the first silently would hide
// the mistake of a client that meant another.
func (s *Server) ingestFile(r *http.Request, mr *multipart.Reader) (media.Blob, error) {
	var blob media.Blob
	found := false
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			return media.Blob{}, uploadReadError(err)
		}
		if part.FormName() != "file" {
			if _, err := io.Copy(io.Discard, part); err != nil {
				return media.Blob{}, uploadReadError(err)
			}
			continue
		}
		if found {
			return media.Blob{}, fieldError("file", "is given more than once; upload one file per request")
		}
		if blob, err = s.ingestPart(r, part); err != nil {
			return media.Blob{}, err
		}
		found = true
	}
	if !found {
		return media.Blob{}, fieldError("file", "is required: send the file as multipart/form-data in the field \"file\"")
	}
	return blob, nil
}

// ingestPart stores the file of one part.
func (s *Server) ingestPart(r *http.Request, part *multipart.Part) (media.Blob, error) {
	blob, err := s.cfg.Media.Ingest(r.Context(), part)
	switch {
	case errors.Is(err, media.ErrTooLarge):
		return media.Blob{}, problem("PAYLOAD_TOO_LARGE", "The "+err.Error()+".")
	case errors.Is(err, media.ErrEmpty):
		return media.Blob{}, fieldError("file", "is empty")
	case errors.Is(err, media.ErrUnsupported):
		return media.Blob{}, problem("UNSUPPORTED_MEDIA_TYPE",
			"No channel accepts this file: "+unsupportedDetail(err)+".")
	case err != nil:
		if r.Context().Err() != nil {
			return media.Blob{}, err
		}
		return media.Blob{}, uploadReadError(err)
	}
	return blob, nil
}

func uploadReadError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return errMediaTooLarge
	}
	return validation("The multipart body could not be read: " + err.Error() + ".")
}

// unsupportedDetail drops the sentinel's own words from the sniffer's
// message, leaving what the content is and what is accepted.
func unsupportedDetail(err error) string {
	msg := err.Error()
	prefix := media.ErrUnsupported.Error() + ": "
	if len(msg) > len(prefix) && msg[:len(prefix)] == prefix {
		return msg[len(prefix):]
	}
	return msg
}
