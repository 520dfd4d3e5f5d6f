package whatsapp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
	"github.com/msgsvc/msgsvc/internal/provider/providertest"
)

// recorder keeps every answer the peer gave, by request path and body.
type recorder struct {
	mu      sync.Mutex
	answers []answer
}

type answer struct {
	path   string
	sent   []byte
	status int
	body   string
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	var sent []byte
	if req.Body != nil {
		sent, _ = io.ReadAll(req.Body)
		req.Body = io.NopCloser(bytes.NewReader(sent))
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(body))
	r.mu.Lock()
	r.answers = append(r.answers, answer{req.URL.Path, sent, resp.StatusCode, string(body)})
	r.mu.Unlock()
	return resp, nil
}

// Every kind of message msgsvc sends passes the request validation of
// Meta's own OpenAPI document, served by Prism as a strict mock (CI starts
// it: see .ci/run and ../shared/peers/whatsapp-cloud/README.md): no 422.
// (The opt-in call-to-action url button, Config.CTAURLButtons, is the one
// shape the document lacks, so it is not among the kinds sent by default.)
func TestPeerEveryKindPassesValidation(t *testing.T) {
	base := os.Getenv("MSGSVC_TEST_WHATSAPP_API_URL")
	if base == "" {
		t.Skip("set MSGSVC_TEST_WHATSAPP_API_URL to Prism serving Meta's WhatsApp document (e.g. http://127.0.0.1:14010/v23.0)")
	}
	rec := &recorder{}
	c, err := New(Config{APIURL: base, PhoneNumberID: testPhoneID, Token: testToken, AppSecret: testAppSecret,
		VerifyToken: testVerifyToken, UserAgent: UserAgent("0.5.0-dev"), MaxAttempts: 1},
		Deps{Sink: &providertest.Sink{}, Files: newFiles(t), Cache: &cache{}}, WithHTTPClient(&http.Client{Transport: rec}))
	if err != nil {
		t.Fatal(err)
	}
	kinds := []struct {
		name    string
		body    string
		content domain.Content
	}{
		{"text", "Your code is 482913", domain.Content{}},
		{"text with a link", "Track it at https://acme.example/t/1", domain.Content{}},
		{"image by link", "Our shop", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/shop.jpg"}}},
		{"video by link", "A clip", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/a.mp4"}}},
		{"document by link", "Invoice", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/invoice.pdf"}}},
		{"image uploaded", "Photo", domain.Content{Media: &domain.Media{MediaID: "med_photo"}}},
		{"video uploaded", "", domain.Content{Media: &domain.Media{MediaID: "med_clip"}}},
		{"document uploaded", "Terms", domain.Content{Media: &domain.Media{MediaID: "med_doc"}}},
		{"reply buttons", "Confirm?", domain.Content{Buttons: []domain.Button{{Type: domain.ReplyButton, Title: "Yes", Payload: "y"},
			{Type: domain.ReplyButton, Title: "No", Payload: "n"}, {Type: domain.ReplyButton, Title: "Later", Payload: "l"}}}},
		{"reply buttons under an image", "Like it?", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/p.png"},
			Buttons: []domain.Button{{Type: domain.ReplyButton, Title: "Yes", Payload: "y"}}}},
		{"reply buttons under an uploaded video", "Watch", domain.Content{Media: &domain.Media{MediaID: "med_clip"},
			Buttons: []domain.Button{{Type: domain.ReplyButton, Title: "More", Payload: "more"}}}},
		{"reply buttons under a document", "Read", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/terms.pdf"},
			Buttons: []domain.Button{{Type: domain.ReplyButton, Title: "Agree", Payload: "agree"}}}},
		{"call button", "Questions?", domain.Content{Buttons: []domain.Button{{Type: domain.CallButton, Title: "Call us", Phone: "5511988887777"}}}},
		{"call button under an image", "Questions?", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/p.jpg"},
			Buttons: []domain.Button{{Type: domain.CallButton, Title: "Call us", Phone: "5511988887777"}}}},
		{"list", "Pick a slot", domain.Content{List: &domain.List{Button: "Slots", Sections: []domain.Section{
			{Title: "Morning", Rows: []domain.Row{{ID: "m9", Title: "09:00", Description: "First slot"}}},
			{Title: "Afternoon", Rows: []domain.Row{{ID: "a2", Title: "14:00"}}}}}}},
		{"list of one untitled section", "Pick", domain.Content{List: &domain.List{Button: "Options", Sections: []domain.Section{
			{Rows: []domain.Row{{ID: "a", Title: "A"}, {ID: "b", Title: "B"}}}}}}},
		{"template with parameters", "", domain.Content{Template: &domain.Template{Name: "order_update", Language: "pt_BR", Parameters: []string{"123", "shipped"}}}},
		{"template without parameters", "", domain.Content{Template: &domain.Template{Name: "hello_world", Language: "en_US"}}},
		{"url button", "See the dates", domain.Content{Buttons: []domain.Button{{Type: domain.URLButton, Title: "See dates", URL: "https://acme.example/dates"}}}},
	}
	for _, k := range kinds {
		res := c.Submit(context.Background(), []provider.Outbound{{ID: "msg_" + k.name, AccountID: "acc_1", To: "5511999990000",
			Channel: domain.WhatsApp, Body: k.body, Content: k.content}})
		if res[0].Err != nil || res[0].Ref == "" {
			t.Errorf("%s: %+v %v", k.name, res[0], res[0].Err)
		}
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	sawUpload := false
	for _, a := range rec.answers {
		sawUpload = sawUpload || strings.HasSuffix(a.path, "/media")
		if a.status != 200 {
			t.Errorf("%s %s: %d %s", a.path, a.sent, a.status, a.body)
		}
	}
	if !sawUpload {
		t.Error("no media upload reached the peer")
	}
}
