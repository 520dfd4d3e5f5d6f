package lifecycle

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"
)

// recorder notes each start and stop in one journal, so that a test reads
// the order parts were started and stopped in.
type recorder struct {
	journal *[]string
	name    string
	failOn  string // "start" or "stop"
}

func (r recorder) Start(context.Context) error { return r.note("start") }
func (r recorder) Stop(context.Context) error  { return r.note("stop") }

func (r recorder) note(op string) error {
	*r.journal = append(*r.journal, op+" "+r.name)
	if r.failOn == op {
		return errors.New(r.name + " broke")
	}
	return nil
}

func group(journal *[]string, parts ...recorder) *Group {
	g := &Group{}
	for _, p := range parts {
		p.journal = journal
		g.Add(p.name, p)
	}
	return g
}

func wantJournal(t *testing.T, got []string, want ...string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("journal\n got %q\nwant %q", got, want)
	}
}

func TestStartsInOrderAndStopsInReverse(t *testing.T) {
	var j []string
	g := group(&j, recorder{name: "store"}, recorder{name: "queue"}, recorder{name: "http"})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantJournal(t, j, "start store", "start queue", "start http", "stop http", "stop queue", "stop store")
	if got := g.Names(); !reflect.DeepEqual(got, []string{"store", "queue", "http"}) {
		t.Errorf("Names = %q", got)
	}
}

func TestAFailedStartStopsWhatStarted(t *testing.T) {
	var j []string
	g := group(&j, recorder{name: "store"}, recorder{name: "queue"}, recorder{name: "http", failOn: "start"}, recorder{name: "never"})
	err := g.Start(context.Background())
	var le *Error
	if !errors.As(err, &le) || le.Name != "http" || le.Op != "start" {
		t.Fatalf("Start = %v, want the failure of http's start", err)
	}
	wantJournal(t, j, "start store", "start queue", "start http", "stop queue", "stop store")
	if err := g.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := g.Start(context.Background()); err == nil {
		t.Fatal("a stopped group started again")
	}
	wantJournal(t, j, "start store", "start queue", "start http", "stop queue", "stop store")
}

func TestStopReachesEveryPartAndJoinsErrors(t *testing.T) {
	var j []string
	g := group(&j, recorder{name: "a", failOn: "stop"}, recorder{name: "b"}, recorder{name: "c", failOn: "stop"})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	err := g.Stop(context.Background())
	if err == nil || err.Error() != "stop c: c broke\nstop a: a broke" {
		t.Fatalf("Stop = %v", err)
	}
	wantJournal(t, j, "start a", "start b", "start c", "stop c", "stop b", "stop a")
}

func TestStopIsIdempotent(t *testing.T) {
	var j []string
	g := group(&j, recorder{name: "a"}, recorder{name: "b"})
	if err := g.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	wantJournal(t, j)
	if err := g.Start(context.Background()); err == nil {
		t.Fatal("a group stopped before its start started")
	}
	g = group(&j, recorder{name: "a"}, recorder{name: "b"})
	if err := g.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := g.Stop(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	wantJournal(t, j, "start a", "start b", "stop b", "stop a")
}

func TestBackgroundRunsUntilStop(t *testing.T) {
	running, finished := make(chan struct{}), make(chan struct{})
	b := Background(func(ctx context.Context) {
		close(running)
		<-ctx.Done()
		close(finished)
	})
	ctx, cancel := context.WithCancel(context.Background())
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	<-running
	cancel() // the start's context ending does not stop the part
	select {
	case <-finished:
		t.Fatal("the part stopped with its start's context")
	default:
	}
	if err := b.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	select {
	case <-finished:
	default:
		t.Fatal("Stop returned before the part did")
	}
	if err := b.Stop(context.Background()); err != nil {
		t.Fatalf("second Stop = %v", err)
	}
}

func TestBackgroundStopGivesUpWithItsContext(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	b := Background(func(ctx context.Context) { <-release })
	if err := b.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if err := b.Stop(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Stop = %v, want the deadline", err)
	}
}

func TestHooksAndCloser(t *testing.T) {
	closed := 0
	c := Closer(func() error { closed++; return nil })
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(context.Background()); err != nil || closed != 1 {
		t.Fatalf("Stop = %v, closed %d times", err, closed)
	}
	if err := (Hooks{}).Start(context.Background()); err != nil {
		t.Fatal(err)
	}
}
