package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// Final statuses of a message (docs/api.md).
var finalStatuses = map[string]bool{"DELIVERED": true, "READ": true, "FAILED": true, "CANCELED": true}

// apiClient is an integrator calling the integration API with one key.
type apiClient struct {
	base string
	key  string
	http *http.Client
}

func newAPIClient(base, key string) *apiClient {
	tr := &http.Transport{MaxIdleConnsPerHost: 32, IdleConnTimeout: 30 * time.Second}
	return &apiClient{base: base, key: key, http: &http.Client{Timeout: 15 * time.Second, Transport: tr}}
}

// sendRequest is the body of POST /api/v1/integration/messages.
type sendRequest struct {
	To          string   `json:"to,omitempty"`
	Recipients  []string `json:"recipients,omitempty"`
	Message     string   `json:"message"`
	Type        string   `json:"type"`
	CallbackURL string   `json:"callbackUrl,omitempty"`
}

// sendResponse is the 202 answer to a send.
type sendResponse struct {
	CampaignID string `json:"campaignId"`
	Messages   []struct {
		MessageID string `json:"messageId"`
		To        string `json:"to"`
		Status    string `json:"status"`
	} `json:"messages"`
}

// messageView is the part of GET messages/{id} these tests read.
type messageView struct {
	MessageID string `json:"messageId"`
	To        string `json:"to"`
	Status    string `json:"status"`
	ErrorCode string `json:"errorCode"`
}

// send posts one send. err is set only when no HTTP answer came; any
// answer is returned with its status code and raw body.
func (c *apiClient) send(ctx context.Context, req sendRequest) (int, sendResponse, []byte, error) {
	code, resp, raw, _, err := c.sendOnce(ctx, req, "")
	return code, resp, raw, err
}

// sendOnce is send with an Idempotency-Key (none when key is ""); it also
// returns the answer's headers.
func (c *apiClient) sendOnce(ctx context.Context, req sendRequest, key string) (code int, out sendResponse, raw []byte, h http.Header, err error) {
	body, err := json.Marshal(req)
	if err != nil {
		return 0, sendResponse{}, nil, nil, fmt.Errorf("encode send: %w", err)
	}
	if key != "" {
		h = http.Header{"Idempotency-Key": {key}}
	}
	code, raw, h, err = c.doHeaders(ctx, http.MethodPost, "/api/v1/integration/messages", body, h)
	if err != nil || code != http.StatusAccepted {
		return code, sendResponse{}, raw, h, err
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return code, out, raw, h, fmt.Errorf("decode send answer %s: %w", raw, err)
	}
	return code, out, raw, h, nil
}

// message reads one message's status.
func (c *apiClient) message(ctx context.Context, id string) (messageView, error) {
	code, raw, err := c.do(ctx, http.MethodGet, "/api/v1/integration/messages/"+id, nil)
	if err != nil {
		return messageView{}, err
	}
	if code != http.StatusOK {
		return messageView{}, fmt.Errorf("GET message %s: %d %s", id, code, raw)
	}
	var v messageView
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("decode message %s: %w", id, err)
	}
	return v, nil
}

func (c *apiClient) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	code, raw, _, err := c.doHeaders(ctx, method, path, body, nil)
	return code, raw, err
}

// doHeaders sends a request with extra headers and returns the answer's
// status, body and headers.
func (c *apiClient) doHeaders(ctx context.Context, method, path string, body []byte, extra http.Header) (int, []byte, http.Header, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("build request: %w", err)
	}
	for k, v := range extra {
		req.Header[k] = v
	}
	req.Header.Set("X-API-KEY", c.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return resp.StatusCode, raw, resp.Header, fmt.Errorf("%s %s: read answer: %w", method, path, err)
	}
	return resp.StatusCode, raw, resp.Header, nil
}

// close drops idle connections (the server they lead to may be gone).
func (c *apiClient) close() { c.http.CloseIdleConnections() }
