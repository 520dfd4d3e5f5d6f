package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime/multipart"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/config"
	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/media"
	"github.com/msgsvc/msgsvc/internal/media/mediatest"
	"github.com/msgsvc/msgsvc/internal/store/storetest"
)

// multipartFile builds a multipart/form-data body with one file part
// (field, filename and declared type as given) and any extra text fields.
func multipartFile(t *testing.T, field, filename, declared string, data []byte, extra ...string) ([]byte, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for i := 0; i+1 < len(extra); i += 2 {
		if err := mw.WriteField(extra[i], extra[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if field != "" {
		h := make(map[string][]string)
		h["Content-Disposition"] = []string{`form-data; name="` + field + `"; filename="` + filename + `"`}
		h["Content-Type"] = []string{declared}
		w, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes(), mw.FormDataContentType()
}

// twoFileParts is a multipart body with two parts named "file".
func twoFileParts(t *testing.T, a, b []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i, data := range [][]byte{a, b} {
		w, err := mw.CreateFormFile("file", fmt.Sprintf("f%d", i))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write(data)
	}
	_ = mw.Close()
	return buf.Bytes(), mw.FormDataContentType()
}

func (e *env) uploadMedia(key, filename, declared string, data []byte, headers ...string) response {
	e.t.Helper()
	body, ct := multipartFile(e.t, "file", filename, declared, data)
	return e.do("POST", "/api/v1/integration/media", key, body, append([]string{"Content-Type", ct}, headers...)...)
}

func sha256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func problemCode(t *testing.T, r response) string {
	t.Helper()
	code, _ := r.json(t)["code"].(string)
	return code
}

func TestMediaUpload(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{})
		ctx := context.Background()
		accepted := []struct {
			name, mime string
			data       []byte
		}{
			{"photo.png", "image/png", mediatest.PNG()},
			{"photo.jpg", "image/jpeg", mediatest.JPEG()},
			{"anim.gif", "image/gif", mediatest.GIF()},
			{"clip.mp4", "video/mp4", mediatest.MP4()},
			{"clip.3gp", "video/3gpp", mediatest.GPP()},
			{"terms.pdf", "application/pdf", mediatest.PDF()},
			{"letter.doc", "application/msword", mediatest.DOC()},
			{"sheet.xls", "application/vnd.ms-excel", mediatest.XLS()},
			{"deck.ppt", "application/vnd.ms-powerpoint", mediatest.PPT()},
			{"letter.docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document", mediatest.DOCX()},
			{"sheet.xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", mediatest.XLSX()},
			{"deck.pptx", "application/vnd.openxmlformats-officedocument.presentationml.presentation", mediatest.PPTX()},
			// The declared type and the name are ignored: the content decides.
			{"lies.txt", "image/png", mediatest.PDF()},
		}
		ids := map[string]string{}
		for _, c := range accepted {
			want := c.mime
			if c.name == "lies.txt" {
				want = "application/pdf"
			}
			r := e.uploadMedia(e.testKey, c.name, "application/octet-stream", c.data)
			if r.status != 201 {
				t.Fatalf("%s: %d %s", c.name, r.status, r.body)
			}
			var got struct {
				MediaID, MIMEType, SHA256 string
				Size                      int64
			}
			if err := json.Unmarshal(r.body, &got); err != nil {
				t.Fatal(err)
			}
			sum := sha256Hex(c.data)
			if !strings.HasPrefix(got.MediaID, "med_") || got.MIMEType != want || got.Size != int64(len(c.data)) || got.SHA256 != sum {
				t.Fatalf("%s: %s", c.name, r.body)
			}
			if r.header.Get("RateLimit-Limit") == "" || r.header.Get("X-RateLimit-Limit") == "" {
				t.Fatalf("%s: no rate-limit headers", c.name)
			}
			path := filepath.Join(mediaDir(e.srv.cfg), sum[:2], sum[2:4], sum)
			if onDisk, err := os.ReadFile(path); err != nil || !bytes.Equal(onDisk, c.data) {
				t.Fatalf("%s: not stored at %s: %v", c.name, path, err)
			}
			ids[c.name] = got.MediaID
		}

		// Dedup: the same bytes give the same mediaId for the same account;
		// another account gets its own id over the same stored file, and
		// cannot use the first account's id.
		png := mediatest.PNG()
		r := e.uploadMedia(e.liveKey, "again.png", "image/png", png)
		if r.status != 201 || r.json(t)["mediaId"] != ids["photo.png"] {
			t.Fatalf("re-upload: %d %s, want mediaId %s", r.status, r.body, ids["photo.png"])
		}
		other, otherKey := otherAccount(t, e)
		r = e.uploadMedia(otherKey, "photo.png", "image/png", png)
		theirs, _ := r.json(t)["mediaId"].(string)
		if r.status != 201 || theirs == "" || theirs == ids["photo.png"] || r.json(t)["sha256"] != sha256Hex(png) {
			t.Fatalf("other account's upload: %d %s", r.status, r.body)
		}
		if _, err := e.st.Media(ctx, other.ID, ids["photo.png"]); !errors.Is(err, domain.ErrNotFound) {
			t.Fatalf("another account's mediaId: %v, want not found", err)
		}
		if m, err := e.st.Media(ctx, other.ID, theirs); err != nil || m.Kind != "image" || m.SHA256 != sha256Hex(png) {
			t.Fatalf("own mediaId: %+v, %v", m, err)
		}
	})
}

func otherAccount(t *testing.T, e *env) (domain.Account, string) {
	t.Helper()
	now := e.clock.Now()
	a, err := CreateAccount(context.Background(), e.st, NewAccount{Name: "Other", Tier: "enterprise", Currency: "USD", Country: "1"}, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.SetLimits(context.Background(), a.ID, domain.Limits{}); err != nil {
		t.Fatal(err)
	}
	k, _, err := CreateKey(context.Background(), e.st, a.ID, "test", now)
	if err != nil {
		t.Fatal(err)
	}
	return a, k.Secret
}

func TestMediaUploadRefusals(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	png := mediatest.PNG()
	noFile, noFileCT := multipartFile(t, "", "", "", nil, "caption", "hello")
	wrongField, wrongFieldCT := multipartFile(t, "upload", "a.png", "image/png", png)
	twoFiles, twoFilesCT := twoFileParts(t, png, mediatest.PDF())
	cases := []struct {
		name   string
		body   []byte
		ct     string
		status int
		code   string
		detail string // part of detail or of the field error
	}{
		{"one byte over 10 MB", nil, "", 413, "PAYLOAD_TOO_LARGE", "10 MB"},
		{"image one byte over 5 MB", nil, "", 413, "PAYLOAD_TOO_LARGE", "image is larger than 5 MB"},
		{"ELF binary", nil, "", 415, "UNSUPPORTED_MEDIA_TYPE", "ELF"},
		{"text claiming image/png", nil, "", 415, "UNSUPPORTED_MEDIA_TYPE", "text/plain"},
		{"macro-enabled Word", nil, "", 415, "UNSUPPORTED_MEDIA_TYPE", "macro"},
		{"empty file", nil, "", 400, "VALIDATION_ERROR", "empty"},
		{"no file field", noFile, noFileCT, 400, "VALIDATION_ERROR", "file"},
		{"file under another name", wrongField, wrongFieldCT, 400, "VALIDATION_ERROR", "file"},
		{"two files", twoFiles, twoFilesCT, 400, "VALIDATION_ERROR", "more than once"},
		{"JSON body", []byte(`{"file":"aGVsbG8="}`), "application/json", 415, "UNSUPPORTED_MEDIA_TYPE", "multipart/form-data"},
		{"no content type", []byte("raw"), "", 415, "UNSUPPORTED_MEDIA_TYPE", "multipart/form-data"},
		{"multipart without boundary", []byte("x"), "multipart/form-data", 415, "UNSUPPORTED_MEDIA_TYPE", "multipart"},
		{"broken multipart", []byte("--b\r\nnonsense"), "multipart/form-data; boundary=b", 400, "VALIDATION_ERROR", "multipart"},
	}
	files := map[string][]byte{
		"one byte over 10 MB":      mediatest.Padded(mediatest.PDF(), media.MaxSize+1),
		"image one byte over 5 MB": mediatest.PNGOfSize(media.MaxImageSize + 1),
		"ELF binary":               mediatest.ELF(),
		"text claiming image/png":  []byte("hello, I am a picture, honest"),
		"macro-enabled Word":       mediatest.DOCM(),
		"empty file":               {},
	}
	for _, c := range cases {
		var r response
		if data, ok := files[c.name]; ok {
			r = e.uploadMedia(e.testKey, "x.png", "image/png", data)
		} else {
			h := []string{"Content-Type", c.ct}
			if c.ct == "" {
				h = []string{"Content-Type", ""}
			}
			r = e.do("POST", "/api/v1/integration/media", e.testKey, c.body, h...)
		}
		if r.status != c.status || problemCode(t, r) != c.code || !strings.Contains(string(r.body), c.detail) {
			t.Fatalf("%s: %d %s, want %d %s mentioning %q", c.name, r.status, r.body, c.status, c.code, c.detail)
		}
		if c.status == 400 && c.detail == "file" {
			fe := r.json(t)["errors"].([]any)[0].(map[string]any)
			if fe["field"] != "file" {
				t.Fatalf("%s: errors %v do not name the field", c.name, fe)
			}
		}
	}
	// The limits themselves are accepted.
	for _, limit := range [][]byte{mediatest.Padded(mediatest.PDF(), media.MaxSize), mediatest.PNGOfSize(media.MaxImageSize)} {
		if r := e.uploadMedia(e.testKey, "big", "application/octet-stream", limit); r.status != 201 ||
			r.json(t)["size"] != float64(len(limit)) {
			t.Fatalf("%d bytes: %d %s", len(limit), r.status, r.body)
		}
	}
	// A declared length over the limit is refused before reading.
	r := e.do("POST", "/api/v1/integration/media", e.testKey, bytes.Repeat([]byte("x"), media.MaxSize+media.MB),
		"Content-Type", "multipart/form-data; boundary=b")
	if r.status != 413 || problemCode(t, r) != "PAYLOAD_TOO_LARGE" {
		t.Fatalf("large declared body: %d %s", r.status, r.body)
	}
	// Nothing refused was kept on disk or left in the temporary directory.
	if left, _ := os.ReadDir(filepath.Join(mediaDir(e.srv.cfg), "tmp")); len(left) != 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

func TestMediaIdempotencyAndRateType(t *testing.T) {
	e := newEnv(t, "sqlite", envOptions{})
	first := e.uploadMedia(e.testKey, "a.png", "image/png", mediatest.PNG(), "Idempotency-Key", "up-1")
	if first.status != 201 || first.header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("first: %d %s", first.status, first.body)
	}
	// A retry builds a new multipart body (another boundary): still a replay.
	again := e.uploadMedia(e.testKey, "renamed.png", "image/png", mediatest.PNG(), "Idempotency-Key", "up-1")
	if again.status != 201 || again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
		t.Fatalf("replay: %d %q %s", again.status, again.header.Get("Idempotent-Replayed"), again.body)
	}
	if r := e.uploadMedia(e.testKey, "b.gif", "image/gif", mediatest.GIF(), "Idempotency-Key", "up-1"); r.status != 409 ||
		problemCode(t, r) != "IDEMPOTENCY_CONFLICT" {
		t.Fatalf("other file, same key: %d %s", r.status, r.body)
	}

	// Uploads count against the media window, whose size the headers show.
	if err := e.st.SetLimits(context.Background(), e.account.ID, domain.Limits{MediaRPM: 2}); err != nil {
		t.Fatal(err)
	}
	var last response
	for i := 0; i < 3; i++ {
		last = e.uploadMedia(e.testKey, "a.pdf", "application/pdf", mediatest.PDF())
		if last.header.Get("RateLimit-Limit") != "2" {
			t.Fatalf("upload %d: RateLimit-Limit %q, want the media window's 2", i, last.header.Get("RateLimit-Limit"))
		}
	}
	if last.status != 429 || problemCode(t, last) != "RATE_LIMITED" {
		t.Fatalf("third upload in a window of 2: %d %s", last.status, last.body)
	}
}

func TestTemplatesListAndCLI(t *testing.T) {
	forEachDialect(t, func(t *testing.T, d string) {
		e := newEnv(t, d, envOptions{noTemplates: true})
		list := func(key string) []any {
			t.Helper()
			r := e.do("GET", "/api/v1/integration/templates", key, nil)
			if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "application/json") {
				t.Fatalf("templates: %d %s", r.status, r.body)
			}
			return r.json(t)["templates"].([]any)
		}
		if got := list(e.testKey); len(got) != 0 {
			t.Fatalf("new account has templates: %v", got)
		}
		cli := func(args ...string) (string, string, int) {
			var out, errb bytes.Buffer
			code := Main(append([]string{"template", "create", "--db", e.srv.cfg.DB, "--account", e.account.ID}, args...),
				strings.NewReader(""), &out, &errb)
			return out.String(), errb.String(), code
		}
		out, errs, code := cli("--name", "order_shipped", "--language", "en", "--category", "UTILITY",
			"--body", "Hi {{1}}, your order {{2}} is on its way.", "--parameters", "customer name, order number", "--json")
		if code != 0 {
			t.Fatalf("template create: %d %s", code, errs)
		}
		var created map[string]any
		if err := json.Unmarshal([]byte(out), &created); err != nil {
			t.Fatalf("--json printed %q", out)
		}
		if created["name"] != "order_shipped" || created["status"] != "APPROVED" ||
			!reflect.DeepEqual(created["parameters"], []any{"customer name", "order number"}) {
			t.Fatalf("created %v", created)
		}
		if out, errs, code = cli("--name", "winter_sale", "--language", "pt_BR", "--category", "marketing",
			"--status", "PENDING", "--body", "Olá {{1}}!"); code != 0 || !strings.Contains(out, "winter_sale") {
			t.Fatalf("second create: %d %s %s", code, out, errs)
		}
		if _, _, code = cli("--name", "static", "--category", "AUTHENTICATION", "--body", "Your code is ready."); code != 0 {
			t.Fatal("template without placeholders refused")
		}
		for _, bad := range [][]string{
			{"--name", "order_shipped", "--language", "en", "--category", "UTILITY", "--body", "dup"},
			{"--name", "x", "--category", "PROMO", "--body", "Hi"},
			{"--name", "x", "--category", "UTILITY", "--body", "Hi {{2}}"},
			{"--name", "x", "--category", "UTILITY"},
		} {
			if _, errs, code := cli(bad...); code != 1 || errs == "" {
				t.Fatalf("%v: exit %d, stderr %q", bad, code, errs)
			}
		}
		if _, errs, code := cli("--name", "x", "--category", "UTILITY", "--body", "Hi", "--account", "acc_missing"); code != 1 ||
			!strings.Contains(errs, "acc_missing") {
			t.Fatalf("unknown account: %d %s", code, errs)
		}

		want := []any{
			map[string]any{"name": "order_shipped", "language": "en", "category": "UTILITY", "status": "APPROVED",
				"body": "Hi {{1}}, your order {{2}} is on its way.", "parameters": []any{"customer name", "order number"}},
			map[string]any{"name": "static", "language": "en", "category": "AUTHENTICATION", "status": "APPROVED",
				"body": "Your code is ready.", "parameters": []any{}},
			map[string]any{"name": "winter_sale", "language": "pt_BR", "category": "MARKETING", "status": "PENDING",
				"body": "Olá {{1}}!", "parameters": []any{"{{1}}"}},
		}
		if got := list(e.liveKey); !reflect.DeepEqual(got, want) {
			t.Fatalf("templates\n got %v\nwant %v", got, want)
		}
		_, otherKey := otherAccount(t, e)
		if got := list(otherKey); len(got) != 0 {
			t.Fatalf("another account sees %v", got)
		}
	})
}

func TestDevDemoTemplates(t *testing.T) {
	cfg := config.Config{Dev: true, DB: storetest.Migrated(t, "sqlite"), Addr: "127.0.0.1:0", RateLimitBackend: "memory",
		NodeID: "dev-test", DispatchWorkers: 1, ShutdownTimeout: 5 * time.Second, LogLevel: "error"}
	srv, err := NewServer(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := srv.Run(ctx); err != nil {
			t.Error(err)
		}
	}()
	if err := devWelcome(context.Background(), srv, io.Discard); err != nil {
		t.Fatal(err)
	}
	accts, err := srv.Store().Accounts(context.Background())
	if err != nil || len(accts) != 1 {
		t.Fatalf("accounts %v, %v", accts, err)
	}
	got, err := srv.Store().Templates(context.Background(), accts[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var summary []string
	for _, tpl := range got {
		summary = append(summary, tpl.Name+"|"+tpl.Language+"|"+tpl.Status+"|"+tpl.Body)
	}
	want := []string{"order_update|en|APPROVED|Your order {{1}} is {{2}}.", "welcome|en|APPROVED|Hello {{1}}, welcome to {{2}}!"}
	if !reflect.DeepEqual(summary, want) {
		t.Fatalf("demo templates %v, want %v", summary, want)
	}
}
