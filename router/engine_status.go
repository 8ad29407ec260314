package router

import (
	"context"
	"time"
)

var _ StatusReporter = (*Engine)(nil)

// Status implements [StatusReporter]: it returns the engine's sessions, in
// the order given to [NewEngine], with their pools, tiers and health at
// the engine's clock ([WithEngineClock]). It never fails; Calls is left
// empty.
func (e *Engine) Status(context.Context) (*Status, error) {
	now := e.now()
	st := &Status{Sessions: make([]SessionStatus, len(e.sessions))}
	for i, s := range e.sessions {
		st.Sessions[i] = s.status(now)
	}
	return st, nil
}

// status describes the session at now.
func (s *session) status(now time.Time) SessionStatus {
	s.mu.Lock()
	fails, until := s.fails, s.until
	s.mu.Unlock()
	st := SessionStatus{
		ID: s.ID, Pool: s.Pool, Tiers: append([]Tier(nil), s.Tiers...),
		Health: HealthHealthy, Failures: fails,
	}
	switch {
	case now.Before(until):
		st.Health, st.CoolingUntil = HealthCoolingDown, until.UTC()
	case !until.IsZero():
		st.Health = HealthHalfOpen // record clears until at the next success
	}
	return st
}
