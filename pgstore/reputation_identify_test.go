package pgstore_test

import (
	"context"
	"sync"
	"testing"
)

// TestReputationStore_identifyOnceAcrossServers: three servers sharing
// one database start at once with a new worker behind a session. One of
// them forgets the session; the others find the new identity recorded
// and report no change, so that none forgets what another server taught
// after its own start.
func TestReputationStore_identifyOnceAcrossServers(t *testing.T) {
	ctx := context.Background()
	servers, _ := reportServers(t, 3)
	const rounds = 10
	for session := int64(1); session <= rounds; session++ {
		if _, err := servers[0].book.Identify(ctx, session, "llama3.2:3b"); err != nil {
			t.Fatal(err)
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			changed int
		)
		for _, s := range servers {
			wg.Go(func() {
				c, err := s.book.Identify(ctx, session, "gemma2:2b")
				if err != nil {
					t.Errorf("Identify: %v", err)
				}
				if c {
					mu.Lock()
					changed++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if changed != 1 {
			t.Errorf("session %d: %d of three servers identifying its new worker at once forgot it; want one", session, changed)
		}
	}
}
