package media_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/media"
)

func TestCheckFor(t *testing.T) {
	item := func(t media.Type, size int64) media.Item {
		return media.Item{ID: "med_x", MIME: t.MIME, Kind: t.Kind, Size: size}
	}
	const mb = media.MB
	tests := []struct {
		channel string
		item    media.Item
		wantErr string // part of the refusal; empty when allowed
	}{
		{"WHATSAPP", item(media.JPEG, 5*mb), ""},
		{"whatsapp", item(media.PNG, 1), ""},
		{"WHATSAPP", item(media.JPEG, 5*mb+1), "WhatsApp images are limited to 5 MB (5242880 bytes)"},
		{"WHATSAPP", item(media.GIF, 100), "WhatsApp does not accept GIF images"},
		{"WHATSAPP", item(media.MP4, 10*mb), ""},
		{"WHATSAPP", item(media.GPP, 10*mb+1), "WhatsApp videos are limited to 10 MB"},
		{"WHATSAPP", item(media.PDF, 10*mb), ""},
		{"WHATSAPP", item(media.DOC, 1000), ""},
		{"WHATSAPP", item(media.XLS, 1000), ""},
		{"WHATSAPP", item(media.DOCX, 1000), ""},
		{"WHATSAPP", item(media.XLSX, 1000), ""},
		{"WHATSAPP", item(media.PPTX, 10*mb+1), "WhatsApp documents are limited to 10 MB"},
		{"RCS", item(media.GIF, 5*mb), ""},
		{"RCS", item(media.JPEG, 5*mb), ""},
		{"RCS", item(media.PNG, 5*mb+1), "RCS images are limited to 5 MB"},
		{"RCS", item(media.GIF, 5*mb+1), "RCS images are limited to 5 MB"},
		{"RCS", item(media.GPP, 10*mb), ""},
		{"RCS", item(media.MP4, 10*mb+1), "RCS videos are limited to 10 MB"},
		{"RCS", item(media.PDF, 10*mb), ""},
		{"RCS", item(media.DOCX, 1), ""},
		{"RCS", item(media.PDF, 10*mb+1), "RCS documents are limited to 10 MB"},
		{"SMS", item(media.JPEG, 1), "SMS messages cannot carry media"},
		{"FAX", item(media.JPEG, 1), "FAX messages cannot carry media"},
		{"WHATSAPP", media.Item{MIME: "image/webp", Kind: media.Image, Size: 1}, "WhatsApp does not accept image/webp"},
	}
	for _, tc := range tests {
		err := media.CheckFor(tc.channel, tc.item)
		name := tc.channel + " " + tc.item.MIME
		if tc.wantErr == "" {
			if err != nil {
				t.Errorf("%s (%d bytes): %v", name, tc.item.Size, err)
			}
			continue
		}
		var re *media.RuleError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s (%d bytes): got %v, want a RuleError with %q", name, tc.item.Size, err, tc.wantErr)
		}
	}
}

// A refused type lists what the channel takes, so an integrator can fix it.
func TestCheckForNamesTheTable(t *testing.T) {
	err := media.CheckFor("WHATSAPP", media.Item{MIME: media.GIF.MIME, Kind: media.Image, Size: 1})
	for _, want := range []string{"images (JPG, PNG) up to 5 MB", "videos (MP4, 3GPP) up to 10 MB", "documents (PDF, DOC, XLS"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %q", err, want)
		}
	}
}
