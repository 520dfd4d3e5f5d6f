package whatsapp

import (
	"sort"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider/whatsapp/whatsapptest"
)

// Every webhook example of Meta's document goes through the signed
// endpoint and becomes the reply above, from the sender to the business
// number, at the example's time.
func TestDocumentWebhookExamples(t *testing.T) {
	examples := whatsapptest.WebhookExamples(t)
	var names []string
	for n := range examples {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) != whatsapptest.ExampleCount() {
		t.Errorf("the document has %d examples %v; the table knows %d", len(names), names, whatsapptest.ExampleCount())
	}
	for _, name := range names {
		body := examples[name]
		want, known := whatsapptest.ExampleReply(name, "https://graph.example/v23.0")
		if !known {
			t.Errorf("example %q is not in the table", name)
			continue
		}
		r := newRig(t, func(c *Config) { c.APIURL = "https://graph.example/v23.0" })
		if w := post(t, r, body, Sign(body, testAppSecret)); w.Code != 200 {
			t.Fatalf("%s: %d %s", name, w.Code, w.Body)
		}
		st, in := r.sink.Got()
		if len(st) != 0 {
			t.Errorf("%s: statuses %v", name, st)
		}
		if want == "" {
			if len(in) != 0 {
				t.Errorf("%s: replies %+v, want none", name, in)
			}
			continue
		}
		if len(in) != 1 {
			t.Fatalf("%s: %d replies, want 1", name, len(in))
		}
		got := in[0]
		if got.Body != want || got.Ref == "" || got.From != "16505551234" || got.To != "15550783881" || got.Channel != domain.WhatsApp ||
			got.At.Before(time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)) {
			t.Errorf("%s:\n got %+v\nwant body %q", name, got, want)
		}
		if w := post(t, r, body, Sign(body, "another app's secret")); w.Code != 401 {
			t.Errorf("%s with a wrong signature: %d", name, w.Code)
		}
		if _, in := r.sink.Got(); len(in) != 1 {
			t.Errorf("%s: a wrongly signed copy was recorded", name)
		}
	}
}
