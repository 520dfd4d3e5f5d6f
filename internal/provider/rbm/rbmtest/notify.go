package rbmtest

import (
	"crypto/hmac"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/google/uuid"
)

// Notification is a webhook call as the platform makes it: a Pub/Sub push
// envelope whose message.data is the base64 of the event, and the
// X-Goog-Signature header: the base64 HMAC-SHA512 of the decoded data,
// keyed with the agent's client token.
type Notification struct {
	Body      []byte
	Signature string
}

// Notify wraps an event (a UserEvent, UserMessage or ServerEvent as JSON,
// or a value that marshals to one) for a webhook signed with clientToken.
func Notify(clientToken string, event any) Notification {
	data, ok := event.([]byte)
	if !ok {
		data, _ = json.Marshal(event)
	}
	body, _ := json.Marshal(map[string]any{
		"message": map[string]any{"data": base64.StdEncoding.EncodeToString(data), "messageId": uuid.NewString(),
			"publishTime": time.Now().UTC().Format(time.RFC3339Nano), "attributes": map[string]string{}},
		"subscription": "projects/rbm-msgsvc-test/subscriptions/rbm-agent-sub",
	})
	return Notification{Body: body, Signature: Sign(clientToken, data)}
}

// Sign is the X-Goog-Signature of decoded data.
func Sign(clientToken string, data []byte) string {
	mac := hmac.New(sha512.New, []byte(clientToken))
	mac.Write(data)
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// UserEvent is a DELIVERED, READ or IS_TYPING event about an agent message.
func UserEvent(phone, agentID, messageID, eventType string) map[string]any {
	return map[string]any{"senderPhoneNumber": "+" + phone, "eventType": eventType, "eventId": uuid.NewString(),
		"messageId": messageID, "sendTime": time.Now().UTC().Format(time.RFC3339Nano), "agentId": agentID}
}

// UserText is a text a user wrote to the agent.
func UserText(phone, agentID, text string) map[string]any {
	return map[string]any{"senderPhoneNumber": "+" + phone, "messageId": uuid.NewString(),
		"sendTime": time.Now().UTC().Format(time.RFC3339Nano), "agentId": agentID, "text": text}
}

// ServerEvent is a TTL_EXPIRATION_REVOKED or TTL_EXPIRATION_REVOKE_FAILED
// event about an agent message.
func ServerEvent(phone, agentID, messageID, eventType string) map[string]any {
	return map[string]any{"phoneNumber": "+" + phone, "agentId": agentID, "messageId": messageID, "eventType": eventType,
		"eventId": uuid.NewString(), "sendTime": time.Now().UTC().Format(time.RFC3339Nano)}
}
