package provider

import (
	"context"
	"errors"
	"strings"
	"testing"
)

type nopSink struct{ Sink }

func TestUsable(t *testing.T) {
	invalid := errors.New("smpp: Addr is required")
	if err := Usable("smpp", invalid, nil); err != invalid {
		t.Fatalf("a configuration's problems come first: %v", err)
	}
	if err := Usable("smpp", nil, nil); err == nil || !strings.HasPrefix(err.Error(), "smpp: no sink") {
		t.Fatalf("no sink: %v", err)
	}
	if err := Usable("smpp", nil, nopSink{}); err != nil {
		t.Fatal(err)
	}
}

func TestStartOnceStartsOnce(t *testing.T) {
	var o StartOnce
	n, refused := 0, errors.New("bind refused")
	start := func(context.Context) error { n++; return refused }
	if err := o.Start(context.Background(), start); err != refused {
		t.Fatalf("first start: %v", err)
	}
	if err := o.Start(context.Background(), start); err != nil || n != 1 {
		t.Fatalf("second start: %v, started %d times", err, n)
	}
}
