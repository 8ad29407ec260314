package router

import (
	"context"
	"fmt"
	"sync"

	"github.com/vouchkit/vouch/internal/fairstore"
)

// DefaultCallerShare bounds any one caller's share of what an engine's
// book learns while other callers teach it too ([WithCallerShare]).
const DefaultCallerShare = 0.5

// WithCallerShare bounds what one caller can move in the engine's
// reputation book: over the latest [DefaultShareWindow] calls that teach
// ([Teaches]; a call of one replica, which has no agreement to teach, is
// not counted), a caller ([CallerFrom]) whose share of them exceeds bound,
// while other callers taught in the window too, teaches with weight
// w = bound·others / ((1−bound)·mine), mine and others being its calls
// in the window and everyone else's; the engine teaches one of its calls
// whenever the weights it accumulated reach one, so that its calls teach
// w each on average and the result is reproducible. No caller then
// supplies more than bound of the evidence while anyone else teaches; a
// caller alone in the window teaches fully, so that a host serving one
// caller keeps learning. The window is the engine's own: servers sharing
// one reputation store each bound the callers of the calls they serve,
// so a caller spread over N servers may supply up to the bound on each. Reports of outcomes ([Engine.Feedback]) are
// bounded alike, over the latest [DefaultShareWindow] reports.
//
// bound must be in (0, 1]; the default is [DefaultCallerShare], and 1
// turns the bound off. A caller with many credentials is many callers;
// an anonymous caller named by IPv6 addresses ("ip:<address>") is one
// for each /64, however many addresses of it its calls come from.
func WithCallerShare(bound float64) EngineOption {
	return func(e *Engine) error {
		if !(bound > 0 && bound <= 1) {
			return fmt.Errorf("%w: caller share %v is outside (0, 1]", ErrInvalidOption, bound)
		}
		e.taught.bound, e.reported.bound = bound, bound
		return nil
	}
}

// Teach reports whether the votes of a call made under ctx are to teach
// the engine's book, and counts the call: false when reputation is off,
// when the call does not teach ([Teaches]), and for the calls its
// caller's share thins out ([WithCallerShare]). The engine asks it of
// every version 3 call of more than one replica; a trust.Service over
// the engine asks it once of each call whose votes it teaches the book
// itself (adaptive's pooled votes).
func (e *Engine) Teach(ctx context.Context) bool {
	return e.rep != nil && Teaches(ctx) && e.taught.admit(shareOwner(ctx))
}

// shareOwner names the caller of ctx for its share: [CallerFrom], an
// IPv6 address by its /64.
func shareOwner(ctx context.Context) string {
	return fairstore.OwnerOf(CallerFrom(ctx), fairstore.IPv6OwnerBits)
}

// shares bounds each caller's share of the latest events of a kind
// (calls that teach, reports), thinning those of a caller above the
// bound deterministically. The zero shares, with bound 0, admits
// everything.
type shares struct {
	bound float64 // in (0, 1]; 0 or 1: no bound

	mu      sync.Mutex
	ring    []string // the callers of the latest events
	next    int      // the oldest once the ring is full
	callers map[string]*sharer
}

// sharer is what shares keeps of a caller with events in its window.
type sharer struct {
	n   int     // events in the window
	acc float64 // weight accumulated toward its next admitted event
}

// admit counts an event of caller and reports whether it teaches: with
// the caller's weight added to what it accumulated, whenever that
// reaches one. Callers with no event left in the window are forgotten.
func (s *shares) admit(caller string) bool {
	if s.bound <= 0 || s.bound >= 1 {
		return true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.callers == nil {
		s.callers = make(map[string]*sharer)
		s.ring = make([]string, 0, DefaultShareWindow)
	}
	if len(s.ring) < cap(s.ring) {
		s.ring = append(s.ring, caller)
	} else {
		old := s.callers[s.ring[s.next]]
		if old.n--; old.n == 0 {
			delete(s.callers, s.ring[s.next])
		}
		s.ring[s.next] = caller
		s.next = (s.next + 1) % len(s.ring)
	}
	c := s.callers[caller]
	if c == nil {
		c = new(sharer)
		s.callers[caller] = c
	}
	c.n++
	c.acc += shareWeight(s.bound, c.n, len(s.ring)-c.n)
	if c.acc < 1-1e-9 { // the sum of 1/w weights w reaches one

		return false
	}
	c.acc--
	return true
}

// shareWeight is the weight of an event of a caller with mine events
// among the latest, against others of everyone else's, under bound:
// min(1, bound·others / ((1−bound)·mine)), and 1 when others is 0 or
// bound is 1.
func shareWeight(bound float64, mine, others int) float64 {
	if others == 0 || bound >= 1 || mine == 0 {
		return 1
	}
	return min(1, bound*float64(others)/((1-bound)*float64(mine)))
}
