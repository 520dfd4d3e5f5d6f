package rbm

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/msgsvc/msgsvc/internal/provider/providertest"
	"github.com/msgsvc/msgsvc/internal/provider/rbm/rbmtest"
)

// The webhook's reading of the platform's data never panics, answers only
// 200 or 400 to a correctly signed call, and records exactly what the
// parser found: a status with the platform's id, or a reply from a number.
func FuzzParseNotification(f *testing.F) {
	seeds := []any{
		rbmtest.UserEvent("5511999990004", testAgent, "3f1c9f2e-6a59-5d6b-9c3e-2b4f5e6a7b8c", "DELIVERED"),
		rbmtest.UserEvent("5511999990004", testAgent, "", "IS_TYPING"),
		rbmtest.UserText("5511999990004", testAgent, "Olá 👋"),
		rbmtest.ServerEvent("5511999990004", testAgent, "m", "TTL_EXPIRATION_REVOKED"),
		map[string]any{"senderPhoneNumber": "+5511999990004", "suggestionResponse": map[string]any{"postbackData": "p", "type": "REPLY"}},
		map[string]any{"senderPhoneNumber": "+5511999990004", "location": map[string]any{"latitude": 1e308, "longitude": -0.5}},
		map[string]any{"senderPhoneNumber": "+5511999990004", "userFile": map[string]any{"payload": map[string]any{"fileSizeBytes": -1}}},
		map[string]any{"eventType": "READ", "senderPhoneNumber": "+1", "sendTime": "2026-13-40T99:99:99Z"},
	}
	for _, s := range seeds {
		b, _ := json.Marshal(s)
		f.Add(b)
	}
	f.Add([]byte(`{"text":null,"senderPhoneNumber":""}`))
	f.Add([]byte(`[]`))
	r := newRig(f, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := parseNotification(data)
		if err == nil {
			for _, st := range p.statuses {
				if st.Ref == "" || st.Status == "" {
					t.Fatalf("status without id or status: %+v", st)
				}
			}
			if p.inbound != nil && (!digits(p.inbound.From) || p.inbound.Channel != "RCS" ||
				(p.inbound.Ref != "" && !strings.HasPrefix(p.inbound.Ref, "+"+p.inbound.From+"/"))) {
				t.Fatalf("inbound %+v", p.inbound)
			}
			if len(p.statuses) > 0 && p.inbound != nil {
				t.Fatal("both a status and a reply")
			}
		}
		r.sink = &providertest.Sink{}
		r.a.sink = r.sink
		n := rbmtest.Notify(testToken, data)
		w := post(t, r.a, n.Body, n.Signature)
		sts, ins := r.sink.Got()
		switch {
		case err != nil && (w.Code != 400 || len(sts)+len(ins) != 0):
			t.Fatalf("unreadable data answered %d and recorded %d+%d", w.Code, len(sts), len(ins))
		case err == nil && (w.Code != 200 || len(sts) != len(p.statuses) || len(ins) != btoi(p.inbound != nil)):
			t.Fatalf("readable data answered %d and recorded %d+%d", w.Code, len(sts), len(ins))
		}
	})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
