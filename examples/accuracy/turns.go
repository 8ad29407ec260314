package main

import (
	"context"
	"slices"
	"sync"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// turns runs the router calls of an adaptive trust call in the order the
// service picked their sessions. Adaptive launches two runs at once after
// its first batch, each a router call on one session; with reputation on,
// the engine counts every run it launches towards the sessions' shares,
// in the order the calls reach it, and that order moves which run a
// share's window forgets first. Left to the scheduler, the same seed
// would give other figures. The service takes its sessions in the order
// of the engine's ranking (router.Engine.Order), so the calls run in that
// order: a call waits until the calls on every session ranked before its
// own have run.
type turns struct {
	mu    sync.Mutex
	cond  *sync.Cond
	order []router.SessionID // the ranking of the trust call in flight
	next  int                // the position in order of the session whose call runs next
}

func newTurns() *turns {
	t := &turns{}
	t.cond = sync.NewCond(&t.mu)
	return t
}

// start begins a trust call whose sessions were ranked in order.
func (t *turns) start(order []router.SessionID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.order, t.next = slices.Clone(order), 0
}

// wait blocks until the call on session id is the next to run. A call on
// a session not ranked after the calls already run runs at once.
func (t *turns) wait(id router.SessionID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for {
		i := slices.Index(t.order, id)
		if i <= t.next {
			return
		}
		t.cond.Wait()
	}
}

// done records that the call on session id has run.
func (t *turns) done(id router.SessionID) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.next < len(t.order) && t.order[t.next] == id {
		t.next++
	}
	t.cond.Broadcast()
}

// Order orders ids as the engine does, and begins the turns of the trust
// call that asked, in the order the service takes them: the scope's
// leader first when it has one (reputation.Book.Leader), as the service
// runs it.
func (s stepper) Order(ids []router.SessionID, rel consensus.Reliabilities, evidence map[int64]reputation.Record) []router.SessionID {
	order := s.Engine.Order(ids, rel, evidence)
	turns := order
	if b := s.Engine.Reputation(); b != nil && len(order) > 1 {
		sessions := make([]int64, len(order))
		for i, id := range order {
			sessions[i] = int64(id)
		}
		if l, ok, err := b.Leader(context.Background(), s.scope, sessions); err == nil && ok {
			i := slices.Index(order, router.SessionID(l.Session))
			turns = append(append([]router.SessionID{order[i]}, order[:i]...), order[i+1:]...)
		}
	}
	s.p.turns.start(turns)
	return order
}
