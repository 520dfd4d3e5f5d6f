package whatsapp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/textproto"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Files reads the files integrators uploaded (*media.Store).
type Files = provider.Files

// MediaCache remembers the platform's id of each file uploaded to it
// (*store.Store), per scope: the provider and its phone number.
type MediaCache = provider.MediaCache

// mediaObject resolves a message's media: a link goes as it is; an
// uploaded file goes by the platform's id, uploading it first unless the
// platform already has it.
func (c *Client) mediaObject(ctx context.Context, accountID string, ref domain.Media) (string, *mediaObject, *failure) {
	if ref.URL != "" {
		return linkKind(ref.URL), &mediaObject{Link: ref.URL}, nil
	}
	if c.deps.Files == nil {
		return "", nil, mediaFailure("this node has no media store to read %s from", ref.MediaID)
	}
	it, err := c.deps.Files.Lookup(ctx, accountID, ref.MediaID)
	if errors.Is(err, media.ErrNotFound) {
		return "", nil, mediaFailure("media %s no longer exists", ref.MediaID)
	}
	if err != nil {
		return "", nil, &failure{&provider.Error{Code: domain.CodeProviderError, Message: "read media: " + err.Error(), Temporary: true}, transient}
	}
	id, f := c.platformID(ctx, it)
	if f != nil {
		return "", nil, f
	}
	kind := string(it.Kind)
	if kind != "image" && kind != "video" {
		kind = "document"
	}
	return kind, &mediaObject{ID: id}, nil
}

func mediaFailure(format string, args ...any) *failure {
	return &failure{&provider.Error{Code: domain.CodeMediaError, Message: fmt.Sprintf(format, args...)}, refused}
}

// scope names the platform's copies: ids are valid for one business number.
func (c *Client) scope() string { return c.cfg.Name + "/" + c.cfg.PhoneNumberID }

// platformID is the platform's id for a file: from the cache while the
// upload is young enough, else uploaded now. Concurrent sends of one file
// share one upload.
func (c *Client) platformID(ctx context.Context, it media.Item) (string, *failure) {
	if c.deps.Cache != nil {
		id, found, err := c.deps.Cache.PlatformMedia(ctx, c.scope(), it.SHA256, c.now().Add(-c.cfg.MediaReuse))
		if err != nil {
			c.log.Warn("whatsapp media cache unreadable; uploading again", "err", err)
		}
		if found {
			c.counts.reused.Add(1)
			return id, nil
		}
	}
	v, _, _ := c.uploads.Do(it.SHA256, func() (any, error) {
		id, f := c.upload(ctx, it)
		if f == nil && c.deps.Cache != nil {
			if err := c.deps.Cache.SavePlatformMedia(context.WithoutCancel(ctx), c.scope(), it.SHA256, id, c.now()); err != nil {
				c.log.Warn("whatsapp media cache not saved; the file will be uploaded again", "err", err)
			}
		}
		return uploaded{id, f}, nil
	})
	u := v.(uploaded)
	return u.id, u.f
}

type uploaded struct {
	id string
	f  *failure
}

// upload sends a file to POST /{phone-number-id}/media as multipart form
// data (messaging_product, type, file) and returns the platform's id.
func (c *Client) upload(ctx context.Context, it media.Item) (string, *failure) {
	f, err := c.deps.Files.Open(ctx, it)
	if err != nil {
		return "", &failure{&provider.Error{Code: domain.CodeProviderError, Message: "open media: " + err.Error(), Temporary: true}, transient}
	}
	data, err := io.ReadAll(io.LimitReader(f, media.MaxSize+1))
	f.Close()
	if err != nil {
		return "", &failure{&provider.Error{Code: domain.CodeProviderError, Message: "read media: " + err.Error(), Temporary: true}, transient}
	}
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	_ = w.WriteField("messaging_product", "whatsapp")
	_ = w.WriteField("type", it.MIME)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", fmt.Sprintf(`form-data; name="file"; filename="%s%s"`, it.SHA256[:min(16, len(it.SHA256))], extension(it.MIME)))
	h.Set("Content-Type", it.MIME)
	part, _ := w.CreatePart(h)
	_, _ = part.Write(data)
	_ = w.Close()
	var resp struct {
		ID string `json:"id"`
	}
	if fl := c.call(ctx, request{path: "/" + c.cfg.PhoneNumberID + "/media", contentType: w.FormDataContentType(), body: body.Bytes()}, &resp); fl != nil {
		if fl.kind == refused {
			fl.err.Code = domain.CodeMediaError
			fl.err.Message = "media upload refused: " + fl.err.Message
		}
		return "", fl
	}
	if resp.ID == "" {
		return "", mediaFailure("WhatsApp answered the media upload without an id")
	}
	c.counts.uploads.Add(1)
	return resp.ID, nil
}

// extension names the upload's file for the platform, which reads the
// type from the "type" field and the part's Content-Type.
func extension(mime string) string {
	for _, t := range []struct{ mime, ext string }{{media.JPEG.MIME, ".jpg"}, {media.PNG.MIME, ".png"},
		{media.MP4.MIME, ".mp4"}, {media.GPP.MIME, ".3gp"}, {media.PDF.MIME, ".pdf"}, {media.DOC.MIME, ".doc"},
		{media.XLS.MIME, ".xls"}, {media.PPT.MIME, ".ppt"}, {media.DOCX.MIME, ".docx"}, {media.XLSX.MIME, ".xlsx"},
		{media.PPTX.MIME, ".pptx"}, {media.GIF.MIME, ".gif"}} {
		if t.mime == mime {
			return t.ext
		}
	}
	return ""
}
