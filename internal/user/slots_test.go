package user

import (
	"context"
	"testing"
	"time"
)

// Slots hand out at most their size at once; a waiter gets a slot as soon
// as one is released, and gives up when its wait or its context ends.
func TestSlots(t *testing.T) {
	s := NewSlots(2)
	ctx := context.Background()
	for i := range 2 {
		if !s.Acquire(ctx, time.Second) {
			t.Fatalf("slot %d of two not given", i+1)
		}
	}
	if s.Acquire(ctx, time.Millisecond) {
		t.Fatal("a third slot of two given")
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if s.Acquire(canceled, time.Hour) {
		t.Fatal("a slot given to a canceled context with every slot taken")
	}
	got := make(chan bool)
	go func() { got <- s.Acquire(ctx, time.Hour) }()
	s.Release()
	if !<-got {
		t.Fatal("a waiter got no slot once one was released")
	}
	if NewSlots(0).Size() != 1 {
		t.Fatal("no slot at all")
	}
}
