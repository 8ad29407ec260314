package trust_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestWithSessionPool_refusesNonSessions: a pool naming a session id
// that is not positive is refused by New, naming the id, as
// WithSingleSession refuses one, rather than failing every call later.
func TestWithSessionPool_refusesNonSessions(t *testing.T) {
	for _, pool := range [][]router.SessionID{{0}, {1, 2, -3}} {
		_, err := trust.New(newEngine(t, verdictOf(router.VerdictValid)), trust.WithSessionPool(pool...))
		if err == nil {
			t.Errorf("WithSessionPool(%v) accepted", pool)
			continue
		}
		if bad := pool[len(pool)-1]; !strings.Contains(err.Error(), bad.String()) {
			t.Errorf("WithSessionPool(%v): error %q does not name %d", pool, err, bad)
		}
	}
	if _, err := trust.New(newEngine(t, verdictOf(router.VerdictValid)), trust.WithSessionPool(1, 2)); err != nil {
		t.Errorf("WithSessionPool(1, 2): %v", err)
	}
}
