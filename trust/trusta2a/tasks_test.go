package trusta2a

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/trust"
)

// taskOf is a task named id whose status message holds n bytes of text.
func taskOf(id string, n int) *a2a.Task {
	return &a2a.Task{ID: a2a.TaskID(id), ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateCompleted,
		Message: &a2a.Message{ID: "m", Role: a2a.MessageRoleAgent, Parts: a2a.ContentParts{a2a.TextPart{Text: strings.Repeat("x", n)}}}}}
}

// check fails the test when the store's counts disagree with its tasks,
// or it is beyond its bounds other than by the one task of the caller
// holding the most bytes.
func (s *taskStore) check(t *testing.T) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int
	var bytes int64
	for _, c := range s.callers {
		var cb int64
		for el := c.tasks.Front(); el != nil; el = el.Next() {
			cb += el.Value.(*keptTask).size
			n++
		}
		if cb != c.bytes || c.tasks.Len() == 0 || c.tasks.Len() > s.perCaller {
			t.Errorf("owner %q: %d tasks, %d bytes counted, %d held", c.owner, c.tasks.Len(), c.bytes, cb)
		}
		bytes += cb
	}
	if n != len(s.tasks) || bytes != s.bytes || len(s.byCount.callers) != len(s.callers) || len(s.byBytes.callers) != len(s.callers) {
		t.Errorf("%d tasks in lists, %d in the map; %d bytes held, %d counted", n, len(s.tasks), bytes, s.bytes)
	}
	for _, r := range []*callerRank{&s.byCount, &s.byBytes} {
		for i, c := range r.callers {
			if c.at[r.rank] != i || i > 0 && r.Less(i, (i-1)/2) {
				t.Errorf("rank %d: owner %q at %d (recorded %d) is out of heap order", r.rank, c.owner, i, c.at[r.rank])
			}
		}
	}
	if n > s.max {
		t.Errorf("%d tasks: beyond the bound %d", n, s.max)
	}
	if s.bytes > s.maxBytes {
		// Only by one task, the only one of the caller holding the most.
		if top := s.byBytes.callers[0]; top.tasks.Len() != 1 || s.bytes-top.bytes > s.maxBytes {
			t.Errorf("%d bytes: beyond the bound %d, and not by the one task of the caller holding the most", s.bytes, s.maxBytes)
		}
	}
}

// held returns the ids of the tasks caller holds, oldest first.
func (s *taskStore) held(caller string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ids []string
	if c := s.callers[fairstore.OwnerOf(caller, fairstore.IPv6OwnerBits)]; c != nil {
		for el := c.tasks.Front(); el != nil; el = el.Next() {
			if k := el.Value.(*keptTask).key; k.caller == caller {
				ids = append(ids, string(k.id))
			}
		}
	}
	return ids
}

// The store is bounded in bytes, and a caller whose large tasks fill it
// forgets its own oldest, not the small task of another caller; a task
// saved again is counted once, at its new size.
func TestTaskStore_bytes(t *testing.T) {
	s := newTaskStore(100, 100, 20_000)
	demo, acme := trust.WithCaller(context.Background(), "demo"), trust.WithCaller(context.Background(), "acme")
	save := func(ctx context.Context, task *a2a.Task) {
		t.Helper()
		if err := s.Save(ctx, task); err != nil {
			t.Fatal(err)
		}
		s.check(t)
	}
	save(demo, taskOf("d1", 100))
	for i := range 30 {
		save(acme, taskOf(fmt.Sprint("a", i), 3000))
	}
	if diff := cmp.Diff([]string{"d1"}, s.held("demo")); diff != "" {
		t.Errorf("demo's tasks after acme's 30 large ones (-want +got):\n%s", diff)
	}
	if got := s.held("acme"); len(got) < 5 || got[len(got)-1] != "a29" {
		t.Errorf("acme holds %v, want its newest tasks, as many as fit", got)
	}
	// demo's task saved again, larger: counted at its new size, kept, and
	// room made from acme, which holds the most bytes.
	save(demo, taskOf("d1", 5000))
	if got, err := s.Get(demo, "d1"); err != nil || len(got.Status.Message.Parts[0].(a2a.TextPart).Text) != 5000 {
		t.Errorf("d1 saved again: %v, %v", got, err)
	}
	// A task larger than the bound alone is kept, beside the tasks of
	// acme, which holds fewer bytes: the store is beyond its bound by that
	// task until the next save.
	acmeHeld := s.held("acme")
	save(demo, taskOf("d2", 30_000))
	if diff := cmp.Diff(append(acmeHeld, "d2"), append(s.held("acme"), s.held("demo")...)); diff != "" {
		t.Errorf("after a task larger than the bound (-want +got):\n%s", diff)
	}
	if _, err := s.Get(acme, "d2"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("acme's Get of demo's task: %v, want not found", err)
	}
	// The next save forgets it first: demo holds the most bytes.
	save(acme, taskOf("a30", 100))
	if got := s.held("demo"); len(got) != 0 {
		t.Errorf("demo holds %v after acme's next save, want its large task forgotten", got)
	}
}

// A new caller's one task, larger than what another caller holds in all,
// does not evict that caller's tasks: the caller holding the most bytes
// is the new one, and its task just saved is kept, the store beyond its
// bound by that task alone until the next save.
func TestTaskStore_newCallerLargeTask(t *testing.T) {
	s := newTaskStore(100, 100, 10_000)
	acme, big := trust.WithCaller(context.Background(), "acme"), trust.WithCaller(context.Background(), "big")
	for i := range 3 {
		if err := s.Save(acme, taskOf(fmt.Sprint("a", i), 1000)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Save(big, taskOf("b0", 8000)); err != nil {
		t.Fatal(err)
	}
	s.check(t)
	if diff := cmp.Diff([]string{"a0", "a1", "a2"}, s.held("acme")); diff != "" {
		t.Errorf("acme's tasks after big's one larger task (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"b0"}, s.held("big")); diff != "" {
		t.Errorf("big's tasks (-want +got):\n%s", diff)
	}
}

// Many callers at once keep the store's counts right and within bounds;
// each caller's newest task survives the others' traffic while the store
// holds a task of every caller.
func TestTaskStore_callers(t *testing.T) {
	s := newTaskStore(50, 8, 1<<20)
	for i := range 400 {
		ctx := trust.WithCaller(context.Background(), fmt.Sprint("c", i%10))
		if err := s.Save(ctx, taskOf(fmt.Sprint("t", i), i%7*50)); err != nil {
			t.Fatal(err)
		}
		s.check(t)
	}
	for i := range 10 {
		caller := fmt.Sprint("c", i)
		if got := s.held(caller); len(got) != 5 || got[4] != fmt.Sprint("t", 390+i) {
			t.Errorf("%s holds %v, want its newest 5 tasks (50 shared by 10)", caller, got)
		}
	}
}

// An anonymous caller that takes a new IPv6 address of its /64 for every
// call counts as one owner: its tasks forget its own, never alice's, and
// each address finds and lists only its own tasks.
func TestTaskStore_addressesOfOnePrefixAreOneOwner(t *testing.T) {
	s := newTaskStore(10, 8, 1<<20)
	alice := trust.WithCaller(context.Background(), "alice")
	for _, id := range []string{"a1", "a2"} {
		if err := s.Save(alice, taskOf(id, 10)); err != nil {
			t.Fatal(err)
		}
	}
	address := func(i int) context.Context {
		return trust.WithCaller(context.Background(), fmt.Sprintf("ip:2001:db8::%x", i+1))
	}
	for i := range 50 {
		if err := s.Save(address(i), taskOf(fmt.Sprint("t", i), 10)); err != nil {
			t.Fatal(err)
		}
		s.check(t)
	}
	if diff := cmp.Diff([]string{"a1", "a2"}, s.held("alice")); diff != "" {
		t.Errorf("alice's tasks after 50 of one /64 (-want +got):\n%s", diff)
	}
	if _, err := s.Get(address(49), "t49"); err != nil {
		t.Errorf("the latest address's task: %v", err)
	}
	if _, err := s.Get(address(48), "t49"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another address of the prefix got t49: %v", err)
	}
	if _, err := s.Get(address(41), "t41"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("the prefix holds t41 beyond its eight: %v", err)
	}
	if got := s.list(address(49)); len(got) != 1 || got[0].ID != "t49" {
		t.Errorf("an address lists %d tasks; want its own one", len(got))
	}
}

// Saves and reads from several goroutines at once (under the race
// detector) leave the store's counts right and within its bounds.
func TestTaskStore_concurrent(t *testing.T) {
	s := newTaskStore(40, 10, 64<<10)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			ctx := trust.WithCaller(context.Background(), fmt.Sprint("c", g%4))
			for i := range 100 {
				id := fmt.Sprint(g, "-", i)
				if err := s.Save(ctx, taskOf(id, i*20)); err != nil {
					t.Error(err)
					return
				}
				s.Get(ctx, a2a.TaskID(id))
			}
		})
	}
	wg.Wait()
	s.check(t)
}
