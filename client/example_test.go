package client_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"time"

	"github.com/msgsvc/msgsvc/client"
)

// Send a text message and follow it to its final status.
func Example() {
	c := client.New(os.Getenv("MSGSVC_URL"), os.Getenv("MSGSVC_API_KEY"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	sent, err := c.Send(ctx, client.SendRequest{To: "5511999990000", Message: "Hello from Go", Type: client.SMS})
	if err != nil {
		log.Fatal(err)
	}
	id := sent.Messages[0].MessageID
	for {
		m, err := c.Message(ctx, id)
		if err != nil {
			log.Fatal(err)
		}
		if client.Final(m.Status) {
			fmt.Println(m.Status, m.Segments, m.Encoding)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Output: DELIVERED 1 GSM-7
}

// Errors are *client.Error values carrying the API's problem code and the
// fields at fault.
func Example_errors() {
	c := client.New(os.Getenv("MSGSVC_URL"), os.Getenv("MSGSVC_API_KEY"))
	_, err := c.Send(context.Background(), client.SendRequest{To: "+55 11 99999", Message: "Hi", Type: client.SMS})
	var apiErr *client.Error
	if errors.As(err, &apiErr) {
		fmt.Println(apiErr.StatusCode, apiErr.Code, apiErr.Fields[0].Field)
	}
	fmt.Println(client.HasCode(err, client.CodeValidation))
	// Output:
	// 400 VALIDATION_ERROR to
	// true
}

// Catch up on events after downtime: read the feed from the cursor you
// stored, then store the new one. The feed holds every event, whether or
// not the send had a callbackUrl.
func ExampleClient_Feed() {
	c := client.New(os.Getenv("MSGSVC_URL"), os.Getenv("MSGSVC_API_KEY"))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sent, err := c.Send(ctx, client.SendRequest{To: "5511999990002", Message: "Your code is 1234", Type: client.SMS})
	if err != nil {
		log.Fatal(err)
	}

	stored := "" // where your program keeps its cursor; "" reads from the oldest event kept
	feed := c.Feed(stored)
	for ev, err := range feed.Follow(ctx, 100*time.Millisecond) {
		if err != nil {
			log.Fatal(err)
		}
		if ev.Type != client.EventDeliveryStatus {
			continue
		}
		st, err := ev.DeliveryStatus()
		if err != nil {
			log.Fatal(err)
		}
		if st.MessageID != sent.Messages[0].MessageID {
			continue // another message's event
		}
		if st.ErrorCode != "" {
			fmt.Println(st.Status, st.ErrorCode)
		} else {
			fmt.Println(st.Status)
		}
		if client.Final(st.Status) {
			break
		}
	}
	stored = feed.Cursor() // the next run starts here
	_ = stored
	// Output:
	// SENT
	// FAILED PROVIDER_ERROR
}

// List messages with filters; the iterator fetches the pages.
func ExampleClient_Messages() {
	c := client.New(os.Getenv("MSGSVC_URL"), os.Getenv("MSGSVC_API_KEY"))
	ctx := context.Background()
	campaign := "spring-sale-" + client.NewIdempotencyKey()[:8] // your own id, echoed as reference
	for _, to := range []string{"5511999990101", "5511999990102", "5511999990103"} {
		if _, err := c.Send(ctx, client.SendRequest{To: to, Message: "Sale!", Type: client.SMS, Reference: campaign}); err != nil {
			log.Fatal(err)
		}
	}
	for m, err := range c.Messages(ctx, client.ListOptions{Reference: campaign, Limit: 2}) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(m.To) // newest first
	}
	// Output:
	// 5511999990103
	// 5511999990102
	// 5511999990101
}

// A webhook receiver: verify the signature on the raw body, then read the
// event. Deduplicate on Event.ID, which is also the event's id in the feed.
func ExampleVerifyWebhook() {
	secret := os.Getenv("MSGSVC_WEBHOOK_SECRET") // printed by msgsvc dev / msgsvc account create
	got := make(chan string, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "unreadable body", http.StatusBadRequest)
			return
		}
		if err := client.VerifyWebhook(secret, r.Header, body); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		ev, err := client.ParseWebhook(r.Header, body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if st, err := ev.DeliveryStatus(); err == nil {
			got <- st.Status
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer receiver.Close()

	c := client.New(os.Getenv("MSGSVC_URL"), os.Getenv("MSGSVC_API_KEY"))
	_, err := c.Send(context.Background(), client.SendRequest{To: "5511999990000", Message: "Hi", Type: client.SMS,
		CallbackURL: receiver.URL + "/hooks"})
	if err != nil {
		log.Fatal(err)
	}
	// Retried webhooks may arrive out of order (the feed never does), so
	// wait for the one that matters.
	for status := range got {
		if status == client.StatusDelivered {
			fmt.Println("verified:", status)
			break
		}
	}
	// Output: verified: DELIVERED
}
