package whatsapp

import (
	"context"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// Every kind of message goes out in the platform's shape, exactly.
func TestPayloads(t *testing.T) {
	const to = "5511999990000"
	cases := []struct {
		name    string
		body    string
		content domain.Content
		want    string
	}{
		{"text", "Your code is 482913", domain.Content{},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"text","text":{"body":"Your code is 482913"}}`},
		{"text with a link", "Track it at https://acme.example/t/1", domain.Content{},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"text","text":{"body":"Track it at https://acme.example/t/1","preview_url":true}}`},
		{"image by link", "Our new shop", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/shop.JPG"}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"image","image":{"link":"https://cdn.acme.example/shop.JPG","caption":"Our new shop"}}`},
		{"video by link", "", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/a.mp4?sig=1"}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"video","video":{"link":"https://cdn.acme.example/a.mp4?sig=1"}}`},
		{"document by link", "Invoice", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/invoice"}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"document","document":{"link":"https://cdn.acme.example/invoice","caption":"Invoice"}}`},
		{"image uploaded", "Photo", domain.Content{Media: &domain.Media{MediaID: "med_photo"}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"image","image":{"id":"4490709327384001","caption":"Photo"}}`},
		{"video uploaded", "Clip", domain.Content{Media: &domain.Media{MediaID: "med_clip"}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"video","video":{"id":"4490709327384001","caption":"Clip"}}`},
		{"document uploaded", "Terms", domain.Content{Media: &domain.Media{MediaID: "med_doc"}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"document","document":{"id":"4490709327384001","caption":"Terms"}}`},
		{"reply buttons", "Confirm the visit?", domain.Content{Buttons: []domain.Button{
			{Type: domain.ReplyButton, Title: "Yes", Payload: "visit-yes"}, {Type: domain.ReplyButton, Title: "No", Payload: "visit-no"}}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"interactive","interactive":{"type":"button","body":{"text":"Confirm the visit?"},"action":{"buttons":[{"type":"reply","reply":{"id":"visit-yes","title":"Yes"}},{"type":"reply","reply":{"id":"visit-no","title":"No"}}]}}}`},
		{"reply buttons under an image", "Like it?", domain.Content{Media: &domain.Media{URL: "https://cdn.acme.example/p.png"},
			Buttons: []domain.Button{{Type: domain.ReplyButton, Title: "Yes", Payload: "y"}}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"interactive","interactive":{"type":"button","header":{"type":"image","image":{"link":"https://cdn.acme.example/p.png"}},"body":{"text":"Like it?"},"action":{"buttons":[{"type":"reply","reply":{"id":"y","title":"Yes"}}]}}}`},
		{"url button", "See the dates", domain.Content{Buttons: []domain.Button{{Type: domain.URLButton, Title: "See dates", URL: "https://acme.example/dates"}}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"text","text":{"body":"See the dates\n\nSee dates: https://acme.example/dates","preview_url":true}}`},
		{"call button", "Questions?", domain.Content{Buttons: []domain.Button{{Type: domain.CallButton, Title: "Call us", Phone: "5511988887777"}}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"text","text":{"body":"Questions?\n\nCall us: +5511988887777"}}`},
		{"list", "Pick a slot", domain.Content{List: &domain.List{Button: "Slots", Sections: []domain.Section{
			{Title: "Morning", Rows: []domain.Row{{ID: "m9", Title: "09:00", Description: "First slot"}, {ID: "m10", Title: "10:00"}}},
			{Title: "Afternoon", Rows: []domain.Row{{ID: "a2", Title: "14:00"}}}}}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"interactive","interactive":{"type":"list","body":{"text":"Pick a slot"},"action":{"button":"Slots","sections":[{"title":"Morning","rows":[{"id":"m9","title":"09:00","description":"First slot"},{"id":"m10","title":"10:00"}]},{"title":"Afternoon","rows":[{"id":"a2","title":"14:00"}]}]}}}`},
		{"template with parameters", "Order 123 is shipped", domain.Content{Template: &domain.Template{Name: "order", Language: "pt_BR", Parameters: []string{"123", "shipped"}}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"template","template":{"name":"order","language":{"policy":"deterministic","code":"pt_BR"},"components":[{"type":"body","parameters":[{"type":"text","text":"123"},{"type":"text","text":"shipped"}]}]}}`},
		{"template without parameters", "Hi there", domain.Content{Template: &domain.Template{Name: "a", Language: "en"}},
			`{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"template","template":{"name":"a","language":{"policy":"deterministic","code":"en"}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRig(t, nil)
			res := r.c.Submit(context.Background(), []provider.Outbound{{ID: "msg_1", AccountID: "acc_1", Env: domain.Live,
				To: to, Channel: domain.WhatsApp, Body: c.body, Content: c.content}})
			if res[0].Err != nil || !regexp.MustCompile(`^wamid\.TEST\d+$`).MatchString(res[0].Ref) {
				t.Fatalf("result %+v %v", res[0], res[0].Err)
			}
			sends := r.p.Requests()
			last := sends[len(sends)-1]
			if !jsonEqual(t, last.Body, c.want) {
				t.Fatalf("sent\n%s\nwant\n%s", last.Body, c.want)
			}
			if last.Path != "/v23.0/"+testPhoneID+"/messages" || last.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%s %s", last.Path, last.Header.Get("Content-Type"))
			}
		})
	}
}

// With CTAURLButtons, a url button is the platform's call-to-action
// message, which its published document does not describe yet.
func TestURLButtonAsCallToAction(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CTAURLButtons = true })
	res := r.c.Submit(context.Background(), []provider.Outbound{{ID: "msg_1", AccountID: "acc_1", Env: domain.Live, To: "5511999990000",
		Channel: domain.WhatsApp, Body: "See the dates", Content: domain.Content{Buttons: []domain.Button{
			{Type: domain.URLButton, Title: "See dates", URL: "https://acme.example/dates"}}}}})
	if res[0].Err != nil {
		t.Fatal(res[0].Err)
	}
	sends := r.p.Requests()
	want := `{"messaging_product":"whatsapp","recipient_type":"individual","to":"5511999990000","type":"interactive","interactive":{"type":"cta_url","body":{"text":"See the dates"},"action":{"name":"cta_url","parameters":{"display_text":"See dates","url":"https://acme.example/dates"}}}}`
	if !jsonEqual(t, sends[len(sends)-1].Body, want) {
		t.Fatalf("sent\n%s\nwant\n%s", sends[len(sends)-1].Body, want)
	}
}

func jsonEqual(t *testing.T, got []byte, want string) bool {
	t.Helper()
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("sent body is not JSON: %s", got)
	}
	if err := json.Unmarshal([]byte(want), &b); err != nil {
		t.Fatalf("bad expectation: %v", err)
	}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// Every request carries the bearer token and a User-Agent of the shape
// the platform's document requires.
func TestRequestHeaders(t *testing.T) {
	r := newRig(t, nil)
	r.c.Submit(context.Background(), []provider.Outbound{{AccountID: "acc_1", To: "5511999990000", Body: "hi"},
		{AccountID: "acc_1", To: "5511999990000", Body: "photo", Content: domain.Content{Media: &domain.Media{MediaID: "med_photo"}}}})
	ua := regexp.MustCompile(`^[a-zA-Z0-9\-_]+\/[0-9]+\.[0-9]+\.[0-9]+(;[a-zA-Z0-9\-=\.]+)?(\s+[a-zA-Z0-9\-_]+\/[0-9\-\.]+)?$`)
	reqs := r.p.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests, want 2 sends and 1 upload", len(reqs))
	}
	for _, q := range reqs {
		if q.Header.Get("Authorization") != "Bearer "+testToken {
			t.Errorf("%s: Authorization %q", q.Path, q.Header.Get("Authorization"))
		}
		if got := q.Header.Get("User-Agent"); !ua.MatchString(got) || got != "msgsvc/0.5.0;v=0.5.0-dev" {
			t.Errorf("%s: User-Agent %q", q.Path, got)
		}
	}
}

func TestUserAgent(t *testing.T) {
	for v, want := range map[string]string{"1.2.3": "msgsvc/1.2.3", "v0.5.0": "msgsvc/0.5.0", "0.5.0-dev": "msgsvc/0.5.0;v=0.5.0-dev",
		"1.0.0+build.7": "msgsvc/1.0.0;v=1.0.0-build.7", "dev": "msgsvc/0.0.0;v=dev", "": "msgsvc/0.0.0"} {
		if got := UserAgent(v); got != want {
			t.Errorf("UserAgent(%q) = %q, want %q", v, got, want)
		}
	}
}
