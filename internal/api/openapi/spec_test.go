package openapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/msgsvc/msgsvc/internal/provider/builtin"
)

func rawSpec(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(Spec(builtin.Types()), &doc); err != nil {
		t.Fatalf("openapi.json does not parse: %v", err)
	}
	return doc
}

// at walks a decoded JSON document by keys; it fails the test on a miss.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%s is not an object", strings.Join(keys[:i], "."))
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("missing %s", strings.Join(keys[:i+1], "."))
		}
	}
	return v
}

func strs(t *testing.T, v any) []string {
	t.Helper()
	list, ok := v.([]any)
	if !ok {
		t.Fatalf("want an array, got %T", v)
	}
	out := make([]string, len(list))
	for i, x := range list {
		out[i], _ = x.(string)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	return slices.Equal(a, b)
}

func TestSpecVersionAndInfo(t *testing.T) {
	doc := rawSpec(t)
	if got := at(t, doc, "openapi"); got != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", got)
	}
	for _, k := range []string{"title", "version", "description"} {
		if s, _ := at(t, doc, "info", k).(string); s == "" {
			t.Errorf("info.%s is empty", k)
		}
	}
}

// wantOperations is every operation the brief and the contract name.
var wantOperations = []struct {
	method, path, operationID string
	public                    bool // no API key
}{
	{"GET", "/healthz", "getHealth", true},
	{"GET", "/readyz", "getReadiness", true},
	{"GET", "/metrics", "getMetrics", true},
	{"GET", "/api/v1/integration/balance", "getBalance", false},
	{"GET", "/v1/account/balance", "getAccountBalance", false},
	{"POST", "/api/v1/integration/messages", "sendMessage", false},
	{"GET", "/api/v1/integration/messages", "listMessages", false},
	{"GET", "/api/v1/integration/events", "listEvents", false},
	{"GET", "/api/v1/integration/messages/{messageId}", "getMessage", false},
	{"POST", "/api/v1/integration/messages/{messageId}/cancel", "cancelMessage", false},
	{"GET", "/api/v1/integration/campaigns/{campaignId}", "getCampaign", false},
	{"POST", "/api/v1/integration/campaigns/{campaignId}/cancel", "cancelCampaign", false},
	{"POST", "/api/v1/integration/media", "uploadMedia", false},
	{"GET", "/api/v1/integration/templates", "listTemplates", false},
	{"GET", "/api/v1/integration/limits", "getLimits", false},
	{"GET", "/api/v1/integration/usage", "getUsage", false},
	{"POST", "/api/v1/integration/test/replies", "injectTestReply", false},
	{"GET", "/api/v1/integration/opt-outs", "listOptOuts", false},
	{"POST", "/api/v1/integration/messages/{messageId}/redact", "redactMessage", false},
	{"POST", "/api/v1/auth/login", "login", true},
	{"POST", "/api/v1/auth/logout", "logout", false},
	{"POST", "/api/v1/auth/password", "changePassword", false},
	{"GET", "/api/v1/manage/keys", "manageListKeys", false},
	{"POST", "/api/v1/manage/keys", "manageCreateKey", false},
	{"DELETE", "/api/v1/manage/keys/{id}", "manageRevokeKey", false},
	{"GET", "/api/v1/manage/security/ip-allowlist", "manageGetAllowlist", false},
	{"PUT", "/api/v1/manage/security/ip-allowlist", "manageSetAllowlist", false},
	{"GET", "/api/v1/manage/smpp-users", "manageListSMPPUsers", false},
	{"POST", "/api/v1/manage/smpp-users", "manageCreateSMPPUser", false},
	{"DELETE", "/api/v1/manage/smpp-users/{id}", "manageRemoveSMPPUser", false},
	{"GET", "/api/v1/manage/twilio-credentials", "manageListTwilioCredentials", false},
	{"POST", "/api/v1/manage/twilio-credentials", "manageCreateTwilioCredential", false},
	{"GET", "/api/v1/manage/twilio-credentials/{accountSid}", "manageGetTwilioCredential", false},
	{"DELETE", "/api/v1/manage/twilio-credentials/{accountSid}", "manageRemoveTwilioCredential", false},
	{"POST", "/api/v1/manage/webhook-secret/rotate", "manageRotateSecret", false},
	{"GET", "/api/v1/manage/senders", "manageListSenders", false},
	{"POST", "/api/v1/manage/senders", "manageAddSender", false},
	{"DELETE", "/api/v1/manage/senders/{id}", "manageRemoveSender", false},
	{"POST", "/api/v1/manage/senders/{id}/approve", "manageApproveSender", false},
	{"POST", "/api/v1/manage/senders/{id}/reject", "manageRejectSender", false},
	{"GET", "/api/v1/manage/limits", "manageGetLimits", false},
	{"GET", "/api/v1/manage/limit-requests", "manageListLimitRequests", false},
	{"POST", "/api/v1/manage/limit-requests", "manageRequestLimits", false},
	{"POST", "/api/v1/manage/limit-requests/{id}/approve", "manageApproveLimitRequest", false},
	{"POST", "/api/v1/manage/limit-requests/{id}/reject", "manageRejectLimitRequest", false},
	{"GET", "/api/v1/manage/messages", "manageSearchMessages", false},
	{"GET", "/api/v1/manage/messages/{id}", "manageGetMessage", false},
	{"GET", "/api/v1/manage/messages/{id}/attempts", "manageListAttempts", false},
	{"GET", "/api/v1/manage/replies", "manageListReplies", false},
	{"POST", "/api/v1/manage/events/{id}/redeliver", "manageRedeliver", false},
	{"GET", "/api/v1/manage/balance", "manageGetBalance", false},
	{"GET", "/api/v1/manage/users", "manageListUsers", false},
	{"POST", "/api/v1/manage/users", "manageCreateUser", false},
	{"DELETE", "/api/v1/manage/users/{id}", "manageRemoveUser", false},
	{"GET", "/api/v1/manage/accounts", "manageListAccounts", false},
	{"POST", "/api/v1/manage/accounts", "manageCreateAccount", false},
	{"GET", "/api/v1/manage/accounts/{id}", "manageGetAccount", false},
	{"PUT", "/api/v1/manage/accounts/{id}", "manageUpdateAccount", false},
	{"POST", "/api/v1/manage/accounts/{id}/transfers", "manageTransfer", false},
	{"POST", "/api/v1/manage/accounts/{id}/suspend", "manageSuspendAccount", false},
	{"POST", "/api/v1/manage/accounts/{id}/resume", "manageResumeAccount", false},
	{"POST", "/api/v1/manage/topups", "manageTopUp", false},
	{"GET", "/api/v1/manage/opt-outs", "manageListOptOuts", false},
	{"POST", "/api/v1/manage/opt-outs", "manageAddOptOut", false},
	{"DELETE", "/api/v1/manage/opt-outs/{phone}", "manageRemoveOptOut", false},
	{"GET", "/api/v1/manage/account-webhook", "manageGetAccountWebhook", false},
	{"PUT", "/api/v1/manage/account-webhook", "manageSetAccountWebhook", false},
	{"GET", "/api/v1/manage/alerts", "manageGetAlerts", false},
	{"PUT", "/api/v1/manage/alerts", "manageSetAlerts", false},
	{"GET", "/api/v1/manage/fraud", "manageGetFraud", false},
	{"PUT", "/api/v1/manage/fraud", "manageSetFraud", false},
	{"GET", "/api/v1/manage/fraud/held", "manageListHeld", false},
	{"POST", "/api/v1/manage/fraud/held/{id}/release", "manageReleaseHeld", false},
	{"POST", "/api/v1/manage/fraud/held/{id}/reject", "manageRejectHeld", false},
	{"GET", "/api/v1/manage/fraud/blocks", "manageFraudBlocks", false},
	{"GET", "/api/v1/manage/compliance", "manageGetCompliance", false},
	{"PUT", "/api/v1/manage/compliance", "manageSetCompliance", false},
	{"GET", "/api/v1/manage/routes", "manageListRoutes", false},
	{"POST", "/api/v1/manage/routes/simulate", "manageSimulateRoute", false},
	{"GET", "/api/v1/manage/price-plans", "manageListPricePlans", false},
	{"POST", "/api/v1/manage/price-plans", "manageCreatePricePlan", false},
	{"PUT", "/api/v1/manage/price-plans/{id}", "manageUpdatePricePlan", false},
	{"PUT", "/api/v1/manage/accounts/{id}/price-plan", "manageSetAccountPlan", false},
	{"GET", "/api/v1/manage/prices", "manageAccountPrices", false},
	{"GET", "/api/v1/manage/reports/margins", "manageMarginsReport", false},
	{"GET", "/api/v1/manage/statements/{month}", "manageStatement", false},
	{"GET", "/api/v1/manage/exports/messages.csv", "manageExportMessages", false},
	{"GET", "/api/v1/manage/exports/ledger.csv", "manageExportLedger", false},
	{"GET", "/api/v1/manage/exports/usage.csv", "manageExportUsage", false},
	{"GET", "/api/v1/manage/exports/margins.csv", "manageExportMargins", false},
	{"POST", "/api/v1/manage/campaigns", "manageUploadCampaign", false},
	{"GET", "/api/v1/manage/campaigns/{id}", "manageGetCampaign", false},
	{"POST", "/api/v1/manage/campaigns/{id}/cancel", "manageCancelCampaign", false},
	{"POST", "/api/v1/manage/messages", "manageSend", false},
	{"GET", "/providers/whatsapp/webhook", "whatsappWebhookVerify", true},
	{"POST", "/providers/whatsapp/webhook", "whatsappWebhook", true},
	{"POST", "/providers/rbm/webhook", "rbmWebhook", true},
	{"POST", "/providers/twilio/status", "twilioStatus", true},
	{"POST", "/providers/twilio/inbound", "twilioInbound", true},
	{"POST", "/providers/telnyx/webhook", "telnyxWebhook", true},
	{"POST", "/providers/vonage/status", "vonageStatus", true},
	{"POST", "/providers/vonage/inbound", "vonageInbound", true},
}

func TestOperationsMatchTheBrief(t *testing.T) {
	var want []string
	for _, w := range wantOperations {
		want = append(want, w.method+" "+w.path)
	}
	var got []string
	for _, op := range Operations(builtin.Types()) {
		got = append(got, op.Method+" "+op.Path)
	}
	if !sameSet(got, want) {
		t.Errorf("Operations() = %v\nwant %v", got, want)
	}
}

func TestEveryOperationIsDocumented(t *testing.T) {
	doc := rawSpec(t)
	seen := map[string]bool{}
	for _, w := range wantOperations {
		t.Run(w.operationID, func(t *testing.T) {
			op := at(t, doc, "paths", w.path, strings.ToLower(w.method)).(map[string]any)
			if op["operationId"] != w.operationID {
				t.Errorf("operationId = %v, want %s", op["operationId"], w.operationID)
			}
			if seen[w.operationID] {
				t.Errorf("operationId %s used twice", w.operationID)
			}
			seen[w.operationID] = true
			for _, k := range []string{"summary", "description"} {
				if s, _ := op[k].(string); len(s) < 10 {
					t.Errorf("%s too short: %q", k, s)
				}
			}
			if tags, _ := op["tags"].([]any); len(tags) == 0 {
				t.Error("no tag")
			}
			sec, hasSec := op["security"].([]any)
			if w.public != (hasSec && len(sec) == 0) {
				t.Errorf("public = %v, but security = %v", w.public, op["security"])
			}
			// A realistic example of the success answer is part of the brief
			// (204 No Content has none to give).
			ok := false
			for code, r := range at(t, op, "responses").(map[string]any) {
				if !strings.HasPrefix(code, "2") {
					continue
				}
				if code == "204" {
					ok = true
					continue
				}
				r = resolveRef(t, doc, r)
				for _, mt := range r.(map[string]any)["content"].(map[string]any) {
					if ex, _ := mt.(map[string]any)["examples"].(map[string]any); len(ex) > 0 {
						ok = true
					}
				}
			}
			if !ok {
				t.Error("no example of a 2xx response")
			}
		})
	}
}

func resolveRef(t *testing.T, doc map[string]any, v any) any {
	t.Helper()
	if m, ok := v.(map[string]any); ok {
		if ref, ok := m["$ref"].(string); ok {
			target, err := pointer(doc, ref)
			if err != nil {
				t.Fatal(err)
			}
			return target
		}
	}
	return v
}

func TestEveryRefResolves(t *testing.T) {
	doc := rawSpec(t)
	n := 0
	var walk func(v any, where string)
	walk = func(v any, where string) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				if k == "$ref" {
					n++
					if _, err := pointer(doc, sub.(string)); err != nil {
						t.Errorf("%s: %v", where, err)
					}
					continue
				}
				walk(sub, where+"/"+k)
			}
		case []any:
			for i, sub := range x {
				walk(sub, fmt.Sprintf("%s/%d", where, i))
			}
		}
	}
	walk(doc, "#")
	if n < 100 {
		t.Errorf("found only %d $refs; is the walk broken?", n)
	}
	// The discriminator mapping holds references as plain strings.
	for k, ref := range at(t, doc, "components", "schemas", "Button", "discriminator", "mapping").(map[string]any) {
		if _, err := pointer(doc, ref.(string)); err != nil {
			t.Errorf("discriminator %s: %v", k, err)
		}
	}
}

// contractCodes is section 2 of the contract: every code with its status.
var contractCodes = map[string]int{
	"MISSING_API_KEY":             401,
	"INVALID_API_KEY":             401,
	"TOKEN_EXPIRED":               401,
	"FORBIDDEN":                   403,
	"IP_NOT_ALLOWED":              403,
	"NOT_FOUND":                   404,
	"VALIDATION_ERROR":            400,
	"INSUFFICIENT_CREDITS":        402,
	"MESSAGE_NOT_CANCELABLE":      409,
	"IDEMPOTENCY_CONFLICT":        409,
	"PAYLOAD_TOO_LARGE":           413,
	"UNSUPPORTED_MEDIA_TYPE":      415,
	"OUTSIDE_CONVERSATION_WINDOW": 422,
	"RECIPIENT_OPTED_OUT":         422,
	"DAILY_LIMIT_REACHED":         429,
	"RATE_LIMITED":                429,
	"INTERNAL":                    500,
	"SERVICE_UNAVAILABLE":         503,
}

func TestErrorCodes(t *testing.T) {
	doc := rawSpec(t)
	ec := at(t, doc, "components", "schemas", "ErrorCode").(map[string]any)
	enum := strs(t, ec["enum"])
	statusOf := map[string]int{}
	for _, row := range ec["x-error-codes"].([]any) {
		r := row.(map[string]any)
		statusOf[r["code"].(string)] = int(r["status"].(float64))
	}
	if !sameSet(enum, slices.Collect(maps.Keys(statusOf))) {
		t.Errorf("x-error-codes %v and enum %v differ", slices.Sorted(maps.Keys(statusOf)), enum)
	}
	for code, status := range contractCodes {
		if !slices.Contains(enum, code) {
			t.Errorf("contract code %s missing from the ErrorCode enum", code)
		}
		if statusOf[code] != status {
			t.Errorf("x-error-codes gives %s status %d, contract says %d", code, statusOf[code], status)
		}
	}
	if got := at(t, doc, "components", "schemas", "Problem", "properties", "code", "$ref"); got != "#/components/schemas/ErrorCode" {
		t.Errorf("Problem.code = %v, want the ErrorCode enum", got)
	}

	// Every contract status has an error response, and every problem
	// example anywhere uses a known code with its own status.
	covered := map[int]bool{}
	forEachResponse(t, doc, func(where, status string, resp map[string]any) {
		content, _ := resp["content"].(map[string]any)
		pj, ok := content["application/problem+json"].(map[string]any)
		if !strings.HasPrefix(status, "2") && status != "503" && !ok && !strings.HasPrefix(where, "webhooks") {
			t.Errorf("%s %s: error response without application/problem+json", where, status)
		}
		if !ok {
			return
		}
		if ref := at(t, pj, "schema", "$ref"); ref != "#/components/schemas/Problem" {
			t.Errorf("%s %s: problem schema is %v", where, status, ref)
		}
		for name, ex := range at(t, pj, "examples").(map[string]any) {
			v := at(t, ex, "value").(map[string]any)
			code, _ := v["code"].(string)
			st := fmt.Sprint(v["status"])
			if want, ok := statusOf[code]; !ok || fmt.Sprint(want) != st || st != status {
				t.Errorf("%s %s example %s: code %s with status %s (code's status %d)", where, status, name, code, st, want)
			}
			covered[statusOf[code]] = true
		}
	})
	for _, status := range contractCodes {
		if !covered[status] {
			t.Errorf("no problem example with status %d", status)
		}
	}
}

// forEachResponse visits every response of every path and webhook
// operation, with references resolved.
func forEachResponse(t *testing.T, doc map[string]any, fn func(where, status string, resp map[string]any)) {
	t.Helper()
	for _, group := range []string{"paths", "webhooks"} {
		for path, item := range at(t, doc, group).(map[string]any) {
			for method, op := range item.(map[string]any) {
				for status, r := range at(t, op, "responses").(map[string]any) {
					fn(group+" "+strings.ToUpper(method)+" "+path, status, resolveRef(t, doc, r).(map[string]any))
				}
			}
		}
	}
}

func TestResponseHeaders(t *testing.T) {
	doc := rawSpec(t)
	rateHeaders := []string{"X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit-Limit", "RateLimit-Remaining", "RateLimit-Reset"}
	forEachResponse(t, doc, func(where, status string, resp map[string]any) {
		if strings.HasPrefix(where, "webhooks") {
			return // answered by the integrator, not by msgsvc
		}
		headers, _ := resp["headers"].(map[string]any)
		if _, ok := headers["X-Request-Id"]; !ok {
			t.Errorf("%s %s: no X-Request-Id", where, status)
		}
		integration := strings.Contains(where, "/api/v1/integration/") || strings.Contains(where, "/v1/account/")
		// 401 has no account to count against; 500 and 503 may fail before
		// counting; 405 is answered before any route, so before any window.
		if integration && status != "401" && status != "405" && status != "500" && status != "503" {
			for _, h := range rateHeaders {
				if _, ok := headers[h]; !ok {
					t.Errorf("%s %s: no %s", where, status, h)
				}
			}
		}
		if _, ok := headers["Retry-After"]; ok != (status == "429" || status == "503") {
			t.Errorf("%s %s: Retry-After present = %v", where, status, ok)
		}
	})
	for _, h := range append(rateHeaders, "X-Request-Id", "Retry-After", "Idempotent-Replayed") {
		at(t, doc, "components", "headers", h, "description")
	}
}

func TestSecuritySchemes(t *testing.T) {
	doc := rawSpec(t)
	schemes := at(t, doc, "components", "securitySchemes").(map[string]any)
	key := schemes["apiKey"].(map[string]any)
	if key["type"] != "apiKey" || key["in"] != "header" || key["name"] != "X-API-KEY" {
		t.Errorf("apiKey scheme = %v", key)
	}
	bearer := schemes["bearer"].(map[string]any)
	if bearer["type"] != "http" || bearer["scheme"] != "bearer" {
		t.Errorf("bearer scheme = %v", bearer)
	}
	var names []string
	for _, req := range at(t, doc, "security").([]any) {
		names = append(names, slices.Collect(maps.Keys(req.(map[string]any)))...)
	}
	if !sameSet(names, []string{"apiKey", "bearer"}) {
		t.Errorf("default security = %v, want apiKey or bearer", names)
	}
}

// TestSchemaFields pins the field names that integrators' code depends on.
func TestSchemaFields(t *testing.T) {
	doc := rawSpec(t)
	tests := []struct {
		schema   string
		fields   []string
		required []string // nil: same as fields
	}{
		{"SendRequest", []string{"to", "recipients", "message", "from", "type", "callbackUrl", "media", "buttons", "list", "cards", "template", "fallback", "scheduledAt", "validity", "reference"}, []string{"type"}},
		{"SendResponse", []string{"campaignId", "status", "credits", "messages"}, nil},
		{"AcceptedMessage", []string{"messageId", "to", "status", "segments", "encoding", "credits", "dueAt"}, []string{"messageId", "to", "status", "segments", "encoding", "credits"}},
		{"DryRunResponse", []string{"dryRun", "campaignId", "status", "credits", "messages"}, nil},
		{"Message", []string{"messageId", "campaignId", "to", "from", "type", "channel", "status", "segments", "encoding", "credits", "provider", "errorCode", "errorMessage", "reference", "scheduledAt", "dueAt", "redacted", "createdAt", "updatedAt", "history"},
			[]string{"messageId", "campaignId", "to", "from", "type", "channel", "status", "segments", "encoding", "credits", "provider", "errorCode", "errorMessage", "reference", "createdAt", "updatedAt", "history"}},
		{"StatusChange", []string{"status", "timestamp"}, nil},
		{"MessageList", []string{"messages", "nextCursor"}, nil},
		{"ListedMessage", []string{"messageId", "campaignId", "to", "from", "type", "channel", "status", "segments", "encoding", "credits", "provider", "errorCode", "errorMessage", "reference", "scheduledAt", "dueAt", "redacted", "createdAt", "updatedAt"},
			[]string{"messageId", "campaignId", "to", "from", "type", "channel", "status", "segments", "encoding", "credits", "provider", "errorCode", "errorMessage", "reference", "createdAt", "updatedAt"}},
		{"EventList", []string{"events", "nextCursor"}, nil},
		{"FeedEvent", []string{"id", "type", "createdAt", "data"}, nil},
		{"Campaign", []string{"campaignId", "status", "type", "createdAt", "total", "counts", "messages", "nextCursor"}, nil},
		{"StatusCounts", []string{"HELD", "SENDING", "SENT", "DELIVERED", "READ", "FAILED", "CANCELED"}, nil},
		{"CampaignCancelResult", []string{"campaignId", "canceled", "messages"}, nil},
		{"Balance", []string{"balance", "currency", "last_updated"}, nil},
		{"Media", []string{"mediaId", "mimeType", "size", "sha256"}, nil},
		{"MediaUpload", []string{"file"}, nil},
		{"TemplateList", []string{"templates"}, nil},
		{"Template", []string{"name", "language", "category", "status", "body", "parameters"}, nil},
		{"Limits", []string{"tier", "limits"}, nil},
		{"LimitWindow", []string{"limit", "remaining", "reset"}, nil},
		{"TestReply", []string{"from", "message", "channel"}, []string{"from", "message"}},
		{"OptOutList", []string{"optOuts", "nextCursor"}, nil},
		{"OptOut", []string{"phone", "channel", "createdAt"}, nil},
		{"TestReplyAccepted", []string{"accepted", "campaignId"}, nil},
		{"LoginRequest", []string{"email", "password"}, nil},
		{"Session", []string{"token", "expiresAt"}, nil},
		{"Problem", []string{"type", "title", "status", "code", "detail", "requestId", "errors"}, []string{"status", "code"}},
		{"FieldError", []string{"field", "message"}, nil},
		{"DeliveryStatusEvent", []string{"event", "campaignId", "messageId", "phone", "status", "timestamp", "provider", "errorCode", "errorMessage"}, nil},
		{"MessageReceivedEvent", []string{"event", "campaignId", "phone", "message", "receivedAt", "channel"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.schema, func(t *testing.T) {
			s := at(t, doc, "components", "schemas", tt.schema).(map[string]any)
			props := slices.Collect(maps.Keys(at(t, s, "properties").(map[string]any)))
			if !sameSet(props, tt.fields) {
				t.Errorf("fields %v, want %v", slices.Sorted(slices.Values(props)), tt.fields)
			}
			want := tt.required
			if want == nil {
				want = tt.fields
			}
			if got := strs(t, s["required"]); !sameSet(got, want) {
				t.Errorf("required %v, want %v", got, want)
			}
		})
	}
	limits := slices.Collect(maps.Keys(at(t, doc, "components", "schemas", "Limits", "properties", "limits", "properties").(map[string]any)))
	if !sameSet(limits, []string{"tier", "sending", "status", "media"}) {
		t.Errorf("Limits.limits has %v", limits)
	}
}

func TestConstraints(t *testing.T) {
	doc := rawSpec(t)
	s := func(path ...string) any { return at(t, doc, append([]string{"components", "schemas"}, path...)...) }
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"phone pattern", s("PhoneNumber", "pattern"), "^[0-9]{8,15}$"},
		{"recipients max", s("SendRequest", "properties", "recipients", "maxItems"), 1000.0},
		{"recipients min", s("SendRequest", "properties", "recipients", "minItems"), 1.0},
		{"buttons max", s("SendRequest", "properties", "buttons", "maxItems"), 3.0},
		{"cards max", s("SendRequest", "properties", "cards", "maxItems"), 10.0},
		{"card buttons max", s("RichCard", "properties", "buttons", "maxItems"), 4.0},
		{"card title max", s("RichCard", "properties", "title", "maxLength"), 200.0},
		{"card description max", s("RichCard", "properties", "description", "maxLength"), 2000.0},
		{"template name pattern", s("TemplateRef", "properties", "name", "pattern"), "^[a-z0-9_]+$"},
		{"dry run window", strs(t, s("DryRunResponse", "properties", "messages", "items", "properties", "conversationWindow", "enum")), []string{"open", "closed"}},
		{"dry run new conversation", s("DryRunResponse", "properties", "messages", "items", "properties", "newConversation", "type"), "boolean"},
		{"dry run rcs capable", s("DryRunResponse", "properties", "messages", "items", "properties", "rcsCapable", "type"), "boolean"},
		{"dry run fallback", s("DryRunResponse", "properties", "messages", "items", "properties", "fallback", "type"), "boolean"},
		{"list sections max", s("WhatsAppList", "properties", "sections", "maxItems"), 3.0},
		{"list rows max", s("ListSection", "properties", "rows", "maxItems"), 10.0},
		{"validity min", s("SendRequest", "properties", "validity", "minimum"), 60.0},
		{"validity max", s("SendRequest", "properties", "validity", "maximum"), 259200.0},
		{"validity default", s("SendRequest", "properties", "validity", "default"), 259200.0},
		{"reference max", s("SendRequest", "properties", "reference", "maxLength"), 128.0},
		{"channels", strs(t, s("Channel", "enum")), []string{"SMS", "WHATSAPP", "RCS"}},
		{"statuses", strs(t, s("MessageStatus", "enum")), []string{"HELD", "SENDING", "SENT", "DELIVERED", "READ", "FAILED", "CANCELED"}},
		{"fallback channel", strs(t, s("Fallback", "properties", "type", "x-enum-any-case")), []string{"SMS"}},
		{"tiers", strs(t, s("Limits", "properties", "tier", "enum")), []string{"free", "basic", "pro", "enterprise"}},
		{"timestamp format", s("Timestamp", "format"), "date-time"},
		{"idempotency key max", at(t, doc, "components", "parameters", "IdempotencyKey", "schema", "maxLength"), 255.0},
		{"idempotency key header", at(t, doc, "components", "parameters", "IdempotencyKey", "name"), "Idempotency-Key"},
		{"dryRun type", at(t, doc, "components", "parameters", "DryRun", "schema", "type"), "boolean"},
		{"limit min", at(t, doc, "components", "parameters", "Limit", "schema", "minimum"), 1.0},
		{"limit max", at(t, doc, "components", "parameters", "Limit", "schema", "maximum"), 1000.0},
		{"limit default", at(t, doc, "components", "parameters", "Limit", "schema", "default"), 100.0},
		{"media is multipart", at(t, doc, "paths", "/api/v1/integration/media", "post", "requestBody", "content", "multipart/form-data", "schema", "$ref"), "#/components/schemas/MediaUpload"},
		{"dry run answer", at(t, doc, "paths", "/api/v1/integration/messages", "post", "responses", "200", "content", "application/json", "schema", "$ref"), "#/components/schemas/DryRunResponse"},
		{"send answer", at(t, doc, "paths", "/api/v1/integration/messages", "post", "responses", "202", "content", "application/json", "schema", "$ref"), "#/components/schemas/SendResponse"},
		{"replayed header", at(t, doc, "paths", "/api/v1/integration/messages", "post", "responses", "202", "headers", "Idempotent-Replayed", "$ref"), "#/components/headers/Idempotent-Replayed"},
		{"upload answer", at(t, doc, "paths", "/api/v1/integration/media", "post", "responses", "201", "content", "application/json", "schema", "$ref"), "#/components/schemas/Media"},
		{"upload too large", at(t, doc, "paths", "/api/v1/integration/media", "post", "responses", "413", "$ref"), "#/components/responses/MediaTooLarge"},
		{"upload unsupported", at(t, doc, "paths", "/api/v1/integration/media", "post", "responses", "415", "$ref"), "#/components/responses/UnsupportedMediaType"},
		{"send invalid", at(t, doc, "paths", "/api/v1/integration/messages", "post", "responses", "400", "$ref"), "#/components/responses/SendValidationError"},
		{"send outside window", at(t, doc, "paths", "/api/v1/integration/messages", "post", "responses", "422", "$ref"), "#/components/responses/OutsideConversationWindow"},
		{"send too many", at(t, doc, "paths", "/api/v1/integration/messages", "post", "responses", "429", "$ref"), "#/components/responses/SendTooManyRequests"},
		{"test reply answer", at(t, doc, "paths", "/api/v1/integration/test/replies", "post", "responses", "202", "content", "application/json", "schema", "$ref"), "#/components/schemas/TestReplyAccepted"},
		{"login rejects", at(t, doc, "paths", "/api/v1/auth/login", "post", "responses", "401", "$ref"), "#/components/responses/InvalidCredentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !equalJSON(tt.got, tt.want) {
				t.Errorf("got %v, want %v", tt.got, tt.want)
			}
		})
	}
	// Every timestamp of every response is the UTC-with-milliseconds kind.
	for _, name := range []string{"Message.createdAt", "Message.updatedAt", "Message.scheduledAt", "StatusChange.timestamp", "Campaign.createdAt", "Balance.last_updated", "LimitWindow.reset", "Session.expiresAt", "DeliveryStatusEvent.timestamp", "MessageReceivedEvent.receivedAt"} {
		schema, field, _ := strings.Cut(name, ".")
		if got := s(schema, "properties", field, "$ref"); got != "#/components/schemas/Timestamp" {
			t.Errorf("%s is %v, want a Timestamp", name, got)
		}
	}
}

func equalJSON(a, b any) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return bytes.Equal(ja, jb)
}

func TestOperationParameters(t *testing.T) {
	doc := rawSpec(t)
	tests := []struct {
		method, path string
		want         []string // "in:name"
	}{
		{"post", "/api/v1/integration/messages", []string{"header:Idempotency-Key", "query:dryRun"}},
		{"get", "/api/v1/integration/messages", []string{"query:status", "query:to", "query:campaignId", "query:reference", "query:createdFrom", "query:createdTo", "query:limit", "query:cursor"}},
		{"get", "/api/v1/integration/events", []string{"query:after", "query:limit"}},
		{"get", "/api/v1/integration/messages/{messageId}", []string{"path:messageId"}},
		{"post", "/api/v1/integration/messages/{messageId}/cancel", []string{"path:messageId", "header:Idempotency-Key"}},
		{"get", "/api/v1/integration/campaigns/{campaignId}", []string{"path:campaignId", "query:limit", "query:cursor"}},
		{"post", "/api/v1/integration/campaigns/{campaignId}/cancel", []string{"path:campaignId", "header:Idempotency-Key"}},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			var got []string
			for _, p := range at(t, doc, "paths", tt.path, tt.method, "parameters").([]any) {
				p := resolveRef(t, doc, p).(map[string]any)
				got = append(got, fmt.Sprint(p["in"], ":", p["name"]))
			}
			if !sameSet(got, tt.want) {
				t.Errorf("parameters %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWebhooks(t *testing.T) {
	doc := rawSpec(t)
	hooks := at(t, doc, "webhooks").(map[string]any)
	// Webhooks are named by their body's "event", which is how receivers
	// (and the CI's traffic check) tell them apart.
	if got := slices.Collect(maps.Keys(hooks)); !sameSet(got, []string{"delivery_status", "message_received", "balance.low", "spend.daily"}) {
		t.Errorf("webhooks %v", got)
	}
	// The feed's events are shared schemas; the alerts' bodies are written
	// in their webhooks, since nothing else names them and a generator that
	// drops unused schemas (oapi-codegen by default) would leave its webhook
	// types pointing at nothing.
	for name, schema := range map[string]string{"delivery_status": "DeliveryStatusEvent", "message_received": "MessageReceivedEvent",
		"balance.low": "", "spend.daily": ""} {
		t.Run(name, func(t *testing.T) {
			op := at(t, hooks, name, "post")
			body := at(t, op, "requestBody", "content", "application/json", "schema")
			if schema != "" {
				if got := at(t, body, "$ref"); got != "#/components/schemas/"+schema {
					t.Errorf("payload schema %v", got)
				}
				body = at(t, doc, "components", "schemas", schema)
			}
			if got := at(t, body, "properties", "event", "const"); got != name {
				t.Errorf("event const = %v", got)
			}
			var headers []string
			for _, p := range at(t, op, "parameters").([]any) {
				p := resolveRef(t, doc, p).(map[string]any)
				if p["in"] != "header" || p["required"] != true {
					t.Errorf("%v should be a required header", p["name"])
				}
				headers = append(headers, p["name"].(string))
			}
			if !sameSet(headers, []string{"webhook-id", "webhook-timestamp", "webhook-signature", "X-Service-Signature"}) {
				t.Errorf("headers %v", headers)
			}
		})
	}
}

func TestExamplesMatchSchemas(t *testing.T) {
	doc := rawSpec(t)
	v := validator{root: doc}
	n := 0
	check := func(where string, content any) {
		for ct, mt := range content.(map[string]any) {
			mt := mt.(map[string]any)
			for name, ex := range mt["examples"].(map[string]any) {
				n++
				value := at(t, ex, "value")
				for _, e := range v.validate(mt["schema"], value, "$") {
					t.Errorf("%s %s example %s: %s", where, ct, name, e)
				}
			}
		}
	}
	for _, group := range []string{"paths", "webhooks"} {
		for path, item := range at(t, doc, group).(map[string]any) {
			for method, op := range item.(map[string]any) {
				where := strings.ToUpper(method) + " " + path
				if rb, ok := op.(map[string]any)["requestBody"]; ok {
					if c := at(t, rb, "content"); !strings.HasPrefix(path, "/api/v1/integration/media") {
						check(where+" request", c)
					}
				}
				for status, r := range at(t, op, "responses").(map[string]any) {
					if c, ok := resolveRef(t, doc, r).(map[string]any)["content"]; ok {
						check(where+" "+status, c)
					}
				}
			}
		}
	}
	// Parameter and header examples too.
	for _, kind := range []string{"parameters", "headers"} {
		for name, p := range at(t, doc, "components", kind).(map[string]any) {
			p := p.(map[string]any)
			if ex, ok := p["example"]; ok {
				n++
				for _, e := range v.validate(p["schema"], ex, "$") {
					t.Errorf("%s %s example: %s", kind, name, e)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("checked only %d examples", n)
	}
}

// The worked signature example in the spec must verify with the Standard
// Webhooks reference library, or the docs would teach a wrong recipe.
func TestWebhookSignatureExample(t *testing.T) {
	doc := rawSpec(t)
	desc := webhookHeader(t, doc, "webhook-signature")["description"].(string)
	secret := between(t, desc, "with the secret `", "`")
	id := between(t, desc, "`webhook-id` `", "`")
	ts := between(t, desc, "`webhook-timestamp` `", "`")
	sig := between(t, desc, "the header is `", "`")
	for _, p := range []struct{ name, want string }{
		{"webhook-id", id}, {"webhook-timestamp", ts}, {"webhook-signature", sig}, {"X-Service-Signature", sig},
	} {
		if got := webhookHeader(t, doc, p.name)["example"]; got != p.want {
			t.Errorf("%s example %v, want %s as in the worked example", p.name, got, p.want)
		}
	}
	// The example body exactly as written (key order kept), compacted.
	parsed, err := parse(Spec(builtin.Types()))
	if err != nil {
		t.Fatal(err)
	}
	hook, _ := parsed.Webhooks.get("delivery_status")
	mt, _ := hook.Post.RequestBody.Content.get("application/json")
	ex, _ := mt.Examples.get("delivered")
	var body bytes.Buffer
	if err := json.Compact(&body, ex.Value); err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", ts)
	h.Set("webhook-signature", sig)
	if err := wh.VerifyIgnoringTimestamp(body.Bytes(), h); err != nil {
		t.Errorf("worked example does not verify: %v", err)
	}
	body.WriteByte(' ')
	if err := wh.VerifyIgnoringTimestamp(body.Bytes(), h); err == nil {
		t.Error("a changed body still verifies")
	}
}

// webhookHeader is the header parameter of the delivery_status webhook with
// that name. Webhooks declare their headers inline: code generators keep
// only components that paths use, so shared parameters would be dropped.
func webhookHeader(t *testing.T, doc map[string]any, name string) map[string]any {
	t.Helper()
	for _, p := range at(t, doc, "webhooks", "delivery_status", "post", "parameters").([]any) {
		if m := p.(map[string]any); m["name"] == name {
			return m
		}
	}
	t.Fatalf("the delivery_status webhook has no %s header", name)
	return nil
}

func between(t *testing.T, s, start, end string) string {
	t.Helper()
	_, after, ok := strings.Cut(s, start)
	if !ok {
		t.Fatalf("%q not found", start)
	}
	v, _, ok := strings.Cut(after, end)
	if !ok {
		t.Fatalf("no %q after %q", end, start)
	}
	return v
}

func TestParseRejectsUnresolvedRefs(t *testing.T) {
	tests := []struct {
		name, old, new string
	}{
		{"parameter", `"#/components/parameters/DryRun"`, `"#/components/parameters/Nope"`},
		{"response", `"#/components/responses/NotFound"`, `"#/components/responses/Nope"`},
		{"header", `"#/components/headers/Retry-After"`, `"#/components/headers/Nope"`},
		{"schema", `"#/components/schemas/StatusChange"`, `"#/components/schemas/Nope"`},
		{"foreign", `"#/components/schemas/Balance"`, `"other.json#/Balance"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := strings.Replace(string(Spec(builtin.Types())), tt.old, tt.new, 1)
			if spec == string(Spec(builtin.Types())) {
				t.Fatalf("%s not in the document", tt.old)
			}
			if _, err := parse([]byte(spec)); err == nil || !strings.Contains(err.Error(), "unresolved $ref") {
				t.Errorf("parse error = %v, want an unresolved $ref", err)
			}
		})
	}
	if _, err := parse([]byte(`{"openapi": "3.1.0", "paths": [`)); err == nil {
		t.Error("truncated JSON parsed")
	}
}

func TestSpecReturnsACopy(t *testing.T) {
	a := Spec(builtin.Types())
	a[0] = 'X'
	if Spec(builtin.Types())[0] != '{' {
		t.Error("changing one Spec() result changed the next")
	}
}

// The provider types' webhook routes are listed from the registry: the
// document without types has no provider path, and with them it lists each
// type's path items, as the type describes them, after the hand-written
// paths and in the order of the types.
func TestProviderPathsFromTypes(t *testing.T) {
	var bare, full struct{ Paths ordered[json.RawMessage] }
	if err := json.Unmarshal(Spec(nil), &bare); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(Spec(builtin.Types()), &full); err != nil {
		t.Fatal(err)
	}
	for _, p := range bare.Paths {
		if strings.HasPrefix(p.Key, "/providers/") {
			t.Errorf("the hand-written document lists %s", p.Key)
		}
	}
	var want ordered[json.RawMessage]
	for _, typ := range builtin.Types() {
		var items ordered[json.RawMessage]
		if len(typ.OpenAPI) == 0 {
			continue
		}
		if err := json.Unmarshal(typ.OpenAPI, &items); err != nil {
			t.Fatalf("%s: %v", typ.Name, err)
		}
		want = append(want, items...)
	}
	got := full.Paths[len(bare.Paths):]
	if len(got) != len(want) {
		t.Fatalf("%d provider paths, want %d", len(got), len(want))
	}
	for i := range want {
		var g, w any
		_ = json.Unmarshal(got[i].Value, &g)
		_ = json.Unmarshal(want[i].Value, &w)
		if got[i].Key != want[i].Key || !reflect.DeepEqual(g, w) {
			t.Errorf("path %d: %s, want %s as its type describes it", i, got[i].Key, want[i].Key)
		}
	}
}
