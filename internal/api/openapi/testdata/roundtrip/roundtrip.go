// Command roundtrip drives a running msgsvc node with a client that
// oapi-codegen generated, with its default options, from the node's own
// GET /openapi.json: send, status, list, events, balance and a 404. It is
// built in a scratch module next to the generated code (see
// ci-generators.sh), never inside the repository's module.
//
// usage: roundtrip BASE_URL TEST_KEY WANT_BALANCE
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: roundtrip BASE_URL TEST_KEY WANT_BALANCE")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "roundtrip:", err)
		os.Exit(1)
	}
	fmt.Println("roundtrip: send, status, list, events, balance and 404 all as the document says")
}

func run(base, key, wantBalance string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := NewClientWithResponses(base, WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("X-API-KEY", key)
		return nil
	}))
	if err != nil {
		return err
	}
	to, text := "5511999990000", "Hello from a generated client"
	// Lower case on purpose: the document says input enums take any case.
	sent, err := c.SendMessageWithResponse(ctx, nil, SendMessageJSONRequestBody{To: &to, Message: &text, Type: "sms"})
	if err != nil {
		return fmt.Errorf("send: %w", err)
	}
	if sent.JSON202 == nil || len(sent.JSON202.Messages) != 1 {
		return fmt.Errorf("send: %d %s", sent.StatusCode(), sent.Body)
	}
	id := sent.JSON202.Messages[0].MessageId
	if err := waitDelivered(ctx, c, id); err != nil {
		return err
	}
	status := "delivered"
	list, err := c.ListMessagesWithResponse(ctx, &ListMessagesParams{Status: &status})
	if err != nil || list.JSON200 == nil {
		return fmt.Errorf("list: %v %s", err, bodyOf(list))
	}
	if !listed(list.JSON200.Messages, id) {
		return fmt.Errorf("list: %s is not among the delivered messages", id)
	}
	if err := checkEvents(ctx, c, id); err != nil {
		return err
	}
	bal, err := c.GetBalanceWithResponse(ctx)
	if err != nil || bal.JSON200 == nil {
		return fmt.Errorf("balance: %v %s", err, bodyOf(bal))
	}
	want, err := strconv.ParseFloat(wantBalance, 64)
	if err != nil {
		return err
	}
	// Exact equality: the amount must survive the generated type unrounded.
	if bal.JSON200.Balance != want {
		return fmt.Errorf("balance %v, want %v exactly", bal.JSON200.Balance, want)
	}
	missing, err := c.GetMessageWithResponse(ctx, "msg_01JD8Z6T2N7H5F3D1B9Z7X5V3T")
	if err != nil {
		return fmt.Errorf("404: %w", err)
	}
	if missing.ApplicationproblemJSON404 == nil || missing.ApplicationproblemJSON404.Code != NOTFOUND {
		return fmt.Errorf("unknown message: %d %s, want a 404 NOT_FOUND problem", missing.StatusCode(), missing.Body)
	}
	return nil
}

// bodyOf shows an answer for an error message, whatever its type.
func bodyOf(r interface{ StatusCode() int }) string {
	if r == nil {
		return "(no answer)"
	}
	return strconv.Itoa(r.StatusCode())
}

func waitDelivered(ctx context.Context, c *ClientWithResponses, id string) error {
	for {
		m, err := c.GetMessageWithResponse(ctx, id)
		if err != nil {
			return fmt.Errorf("status: %w", err)
		}
		if m.JSON200 == nil {
			return fmt.Errorf("status: %d %s", m.StatusCode(), m.Body)
		}
		if m.JSON200.Status == MessageStatusDELIVERED {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s never DELIVERED (last %s)", id, m.JSON200.Status)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func listed(ms []ListedMessage, id string) bool {
	for _, m := range ms {
		if m.MessageId == id {
			return true
		}
	}
	return false
}

// checkEvents reads the feed until the message's DELIVERED event comes.
func checkEvents(ctx context.Context, c *ClientWithResponses, id string) error {
	var after *string
	for {
		ev, err := c.ListEventsWithResponse(ctx, &ListEventsParams{After: after})
		if err != nil || ev.JSON200 == nil {
			return fmt.Errorf("events: %v %s", err, bodyOf(ev))
		}
		for _, e := range ev.JSON200.Events {
			d, err := e.Data.AsDeliveryStatusEvent()
			if err == nil && d.MessageId == id && d.Status == MessageStatusDELIVERED {
				return nil
			}
		}
		next := ev.JSON200.NextCursor
		after = &next
		if len(ev.JSON200.Events) == 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("events: no DELIVERED event for %s", id)
			case <-time.After(50 * time.Millisecond):
			}
		}
	}
}
