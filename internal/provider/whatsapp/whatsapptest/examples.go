package whatsapptest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// specFile is the peer's document, beside the repository in CI and in the
// development layout (shared/peers/whatsapp-cloud).
const specFile = "shared/peers/whatsapp-cloud/business-messaging-api_v23.0.yaml"

// SpecPath finds Meta's OpenAPI document of the Cloud API: the file named
// by MSGSVC_TEST_WHATSAPP_SPEC, else shared/peers/whatsapp-cloud in a
// directory above the test's. It skips the test when there is none.
func SpecPath(t testing.TB) string {
	t.Helper()
	if p := os.Getenv("MSGSVC_TEST_WHATSAPP_SPEC"); p != "" {
		return p
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if p := filepath.Join(dir, specFile); fileExists(p) {
			return p
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("Meta's WhatsApp Cloud API document is not at ../shared/peers/whatsapp-cloud; set MSGSVC_TEST_WHATSAPP_SPEC to its path")
		}
		dir = parent
	}
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// WebhookExamples are the notification examples of the document's
// webhook (POST /whatsapp/webhooks), by name, as JSON bodies.
func WebhookExamples(t testing.TB) map[string][]byte {
	t.Helper()
	raw, err := os.ReadFile(SpecPath(t))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]struct {
			Post struct {
				RequestBody struct {
					Content map[string]struct {
						Examples map[string]struct {
							Value any `yaml:"value"`
						} `yaml:"examples"`
					} `yaml:"content"`
				} `yaml:"requestBody"`
			} `yaml:"post"`
		} `yaml:"paths"`
	}
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("the WhatsApp document does not parse: %v", err)
	}
	out := map[string][]byte{}
	for name, ex := range doc.Paths["/whatsapp/webhooks"].Post.RequestBody.Content["application/json"].Examples {
		body, err := json.Marshal(ex.Value)
		if err != nil {
			t.Fatalf("example %q: %v", name, err)
		}
		out[name] = body
	}
	if len(out) == 0 {
		t.Fatal("the document has no webhook examples under POST /whatsapp/webhooks")
	}
	return out
}

// exampleReplies is what the adapter makes of each webhook example of
// Meta's document as a reply's text ("" when it is no reply); base/ stands
// for the adapter's APIURL.
var exampleReplies = map[string]string{
	"Text Message": "Does it come in another color?",
	"Text Message with Context (Product Inquiry)": "Is this still available?",
	"Text Message from Click to WhatsApp Ad":      "Hello! Can I get more info on this?",
	"Reaction Message":                            "[reaction] 👍",
	"Image Message":                               "Taj Mahal\n[image image/jpeg] base/1003383421387256",
	"Location Message":                            "[location 37.44221496582,-122.16165924072] Philz Coffee, 101 Forest Ave, Palo Alto, CA 94301",
	"Contact Sharing Message":                     "[contacts] Lucía Gómez +1 (983) 555-2319",
	"Unsupported Message":                         "[unsupported message]",
	"Button Message":                              "Unsubscribe",
	"Interactive List Reply Message":              "priority_express",
	"Interactive Button Reply Message":            "cancel-button",
	"Order Message":                               "[order] 2 × di9ozbzfi4, 1 × nqryix03ez",
	"System Message":                              "",
	"Group Create Message":                        "",
	"Group Settings Update":                       "",
	"Group Remove Participants":                   "",
}

// ExampleReply is the reply text example name becomes with apiURL as the
// adapter's APIURL; ok is false for an example the table does not know.
func ExampleReply(name, apiURL string) (string, bool) {
	s, ok := exampleReplies[name]
	return strings.ReplaceAll(s, "base/", apiURL+"/"), ok
}

// ExampleCount is the number of examples the table knows.
func ExampleCount() int { return len(exampleReplies) }
