package routertest

import (
	"fmt"

	"github.com/vouchkit/vouch/router"
)

// Sessions returns one session per worker, with ids first, first+1, and
// so on, spread round-robin over pools worker pools named "pool-0",
// "pool-1", ...: session i belongs to pool i mod pools. The sessions
// serve every tier. Sessions panics if first is not positive, pools is
// less than 1, or a worker is nil.
func Sessions(first router.SessionID, pools int, workers ...router.Worker) []router.Session {
	if first <= 0 {
		panic(fmt.Sprintf("routertest: Sessions with first id %d", first))
	}
	if pools < 1 {
		panic(fmt.Sprintf("routertest: Sessions with %d pools", pools))
	}
	sessions := make([]router.Session, len(workers))
	for i, w := range workers {
		if w == nil {
			panic(fmt.Sprintf("routertest: Sessions with a nil worker at %d", i))
		}
		sessions[i] = router.Session{
			ID:     first + router.SessionID(i),
			Worker: w,
			Pool:   fmt.Sprintf("pool-%d", i%pools),
		}
	}
	return sessions
}
