package compliance

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/webhook"
)

func TestRedactor(t *testing.T) {
	if _, err := NewRedactor(make([]byte, 31)); err == nil {
		t.Error("a 31-byte key was accepted")
	}
	key, err := ParseKey(NewKey())
	if err != nil {
		t.Fatal(err)
	}
	r, _ := NewRedactor(key)
	h := r.Phone("5511999990000")
	if !regexp.MustCompile(`^redacted:[0-9a-f]{32}$`).MatchString(h) || !Redacted(h) {
		t.Fatalf("hash %q", h)
	}
	if r.Phone("5511999990000") != h || r.Phone(h) != h {
		t.Error("the hash is not stable, or hashing twice changes it")
	}
	if r.Phone("5511999990001") == h {
		t.Error("two numbers, one hash")
	}
	other, _ := NewRedactor(bytes.Repeat([]byte{1}, 32))
	if other.Phone("5511999990000") == h {
		t.Error("the hash does not depend on the key")
	}
	if _, err := ParseKey("c2hvcnQ="); err == nil {
		t.Error("a short key was accepted")
	}
}

func TestRedactEventBodies(t *testing.T) {
	r, _ := NewRedactor(bytes.Repeat([]byte{7}, 32))
	at := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	m := domain.Message{ID: "msg_1", CampaignID: "cmp_1", To: "5511999990000", Provider: "simulator"}
	status := webhook.StatusBody(m, domain.Delivered, at)
	got, err := r.EventBody(status)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(status, "5511999990000", r.Phone("5511999990000"), 1)
	if got != want {
		t.Errorf("delivery_status:\n got %s\nwant %s", got, want)
	}
	reply := webhook.ReplyBody("cmp_1", "5511999990000", "my address is 1 Main St", domain.SMS, at)
	got, err = r.EventBody(reply)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(got, "Main St") || strings.Contains(got, "5511999990000") || !strings.Contains(got, `"message":""`) {
		t.Errorf("message_received: %s", got)
	}
	again, _ := r.EventBody(got)
	if again != got {
		t.Error("redacting a redacted body changed it")
	}
}
