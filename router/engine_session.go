package router

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Session is one session of an [Engine]: an id the requests name, the
// worker that runs its jobs, the tiers it serves and the worker pool it
// belongs to.
type Session struct {
	// ID identifies the session. It must be positive and unique in the
	// engine.
	ID SessionID
	// Worker runs the session's jobs. It must not be nil.
	Worker Worker
	// Tiers lists the tiers the session serves. Empty means every tier;
	// a request without policy.tier may use any session.
	Tiers []Tier
	// Pool names the worker pool behind the session. Version 3 prefers
	// replicas from distinct pools. Empty means a pool of its own: a
	// session without a pool is taken as independent of every other.
	Pool string
}

// check reports what is wrong with s, or nil.
func (s Session) check() error {
	switch {
	case s.ID <= 0:
		return fmt.Errorf("id %d is not positive", s.ID)
	case s.Worker == nil:
		return fmt.Errorf("session %d has a nil worker", s.ID)
	}
	for _, t := range s.Tiers {
		switch t {
		case TierFast, TierSafe, TierOracle, TierBalanced:
		default:
			return fmt.Errorf("session %d: tier %q is not a router tier", s.ID, t)
		}
	}
	return nil
}

// serves reports whether the session takes requests of tier t; an empty
// tier is served by every session.
func (s *Session) serves(t Tier) bool {
	return t == "" || len(s.Tiers) == 0 || slices.Contains(s.Tiers, t)
}

// session is a Session with its health.
type session struct {
	Session

	mu    sync.Mutex
	fails int       // failed runs in a row
	until time.Time // skipped before this instant
}

// healthy reports whether the session may be used at now, and if not,
// until when it cools down.
func (s *session) healthy(now time.Time) (ok bool, until time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !now.Before(s.until), s.until
}

// record notes the result of a run finished at now. It reports whether
// the run sent the session to cool down.
func (s *session) record(failed bool, now time.Time, threshold int, cooldown time.Duration) (cooling bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !failed {
		s.fails, s.until = 0, time.Time{}
		return false
	}
	s.fails++
	if s.fails < threshold || cooldown == 0 {
		return false
	}
	s.until = now.Add(cooldown)
	return true
}
