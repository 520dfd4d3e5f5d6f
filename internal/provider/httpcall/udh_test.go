package httpcall

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/msgsvc/msgsvc/internal/domain"
	"github.com/msgsvc/msgsvc/internal/provider"
)

// An SMS part with a user data header was charged one segment; the HTTP
// APIs take its text as a Body they would bill as several, so one that
// does not fit a segment fails for good before any request.
func TestOversizeUDHPartNeverPosted(t *testing.T) {
	c := New(Settings{}, Deps{})
	var posted atomic.Int64
	send := func(context.Context, provider.Outbound) provider.Result {
		posted.Add(1)
		return provider.Result{Ref: "ok"}
	}
	part := func(text string) provider.Outbound {
		return provider.Outbound{ID: "m", Channel: domain.SMS, Body: text, Content: domain.Content{UDH: "050003070201"}}
	}
	res := c.Each(context.Background(), []provider.Outbound{
		part(strings.Repeat("a", 153)),
		part(strings.Repeat("a", 1524)),
		part(strings.Repeat("я", 68)),
		{ID: "whole", Channel: domain.SMS, Body: strings.Repeat("a", 1524)}, // no header: a long message, charged by its segments
	}, send)
	if res[0].Err != nil || res[3].Err != nil {
		t.Fatalf("a part that fits and a whole long message: %v, %v", res[0].Err, res[3].Err)
	}
	for _, r := range res[1:3] {
		if r.Err == nil || r.Err.Temporary || r.Err.Code != domain.CodeRejected {
			t.Fatalf("oversize part: %+v, want a permanent %s", r.Err, domain.CodeRejected)
		}
	}
	if posted.Load() != 2 {
		t.Fatalf("%d requests, want 2", posted.Load())
	}
}
