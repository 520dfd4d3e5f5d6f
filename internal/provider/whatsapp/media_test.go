package whatsapp

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
)

func photo(n int) []provider.Outbound {
	out := make([]provider.Outbound, n)
	for i := range out {
		out[i] = provider.Outbound{AccountID: "acc_1", To: "5511999990000", Body: "photo",
			Content: domain.Content{Media: &domain.Media{MediaID: "med_photo"}}}
	}
	return out
}

// A file goes to the platform once: concurrent sends share the upload,
// later sends (also by another client on the same cache) reuse its id
// until it is too old, then it is uploaded again.
func TestMediaUploadedOnceThenReused(t *testing.T) {
	r := newRig(t, nil)
	for _, res := range r.c.Submit(context.Background(), photo(8)) {
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	ups := r.p.Uploads()
	if len(ups) != 1 {
		t.Fatalf("%d uploads for one file, want 1", len(ups))
	}
	up := ups[0]
	if up.Path != "/v23.0/"+testPhoneID+"/media" || up.Form["messaging_product"] != "whatsapp" ||
		up.Form["type"] != media.JPEG.MIME || up.FileType != media.JPEG.MIME || string(up.File) != "\xff\xd8\xff\xe0 a photo" {
		t.Fatalf("upload %s %v %q %q", up.Path, up.Form, up.FileType, up.File)
	}
	for _, s := range r.p.Sends() {
		if s["image"].(map[string]any)["id"] != "4490709327384001" {
			t.Fatalf("send without the platform's id: %v", s)
		}
	}

	other, err := New(r.c.cfg, Deps{Sink: r.sink, Files: r.files, Cache: r.cache}, WithClock(r.clock), WithSleep(r.sleep))
	if err != nil {
		t.Fatal(err)
	}
	other.Submit(context.Background(), photo(1))
	if n := len(r.p.Uploads()); n != 1 {
		t.Fatalf("a second client uploaded again (%d uploads)", n)
	}
	if h := other.Health(); h.Reused != 1 || h.Uploads != 0 {
		t.Fatalf("health %+v", h)
	}

	r.advance(26 * 24 * time.Hour)
	r.c.Submit(context.Background(), photo(1))
	if n := len(r.p.Uploads()); n != 2 {
		t.Fatalf("%d uploads after 26 days, want 2", n)
	}
}

// A file the account no longer has, or an upload the platform refuses,
// fails the message with MEDIA_ERROR and no send.
func TestMediaErrors(t *testing.T) {
	r := newRig(t, nil)
	res := r.c.Submit(context.Background(), []provider.Outbound{{AccountID: "acc_other", To: "5511999990000",
		Content: domain.Content{Media: &domain.Media{MediaID: "med_photo"}}}})
	if e := res[0].Err; e == nil || e.Code != domain.CodeMediaError || e.Temporary {
		t.Fatalf("another account's file: %+v", e)
	}
	r.p.SetAnswer(func(q whatsapptest.Request) (int, string, bool) {
		if strings.HasSuffix(q.Path, "/media") {
			return 400, whatsapptest.Error(131053, "Media upload error"), true
		}
		return 0, "", false
	})
	res = r.c.Submit(context.Background(), photo(1))
	if e := res[0].Err; e == nil || e.Code != domain.CodeMediaError || e.Temporary || !strings.Contains(e.Message, "131053") {
		t.Fatalf("refused upload: %+v", e)
	}
	if n := len(r.p.Sends()); n != 0 {
		t.Fatalf("%d sends without media", n)
	}
}
