package pgstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestReplayStore_postgres(t *testing.T) {
	x402test.TestReplayStore(t, func(t *testing.T) (a, b x402.ReplayStore) {
		dbs := openDBs(t, 2)
		return dbs[0].Replay(), dbs[1].Replay()
	})
}

func TestReplayStore_DeleteExpired(t *testing.T) {
	s := openDB(t).Replay()
	ctx := context.Background()
	for i, key := range []string{"a", "b", "c"} {
		if ok, err := s.Reserve(ctx, key, t0, t0.Add(time.Duration(i+1)*time.Hour)); err != nil || !ok {
			t.Fatalf("Reserve(%s) = %v, %v", key, ok, err)
		}
	}
	if n, err := s.DeleteExpired(ctx, t0.Add(2*time.Hour)); err != nil || n != 2 {
		t.Errorf("DeleteExpired(+2h) = %d, %v; want 2", n, err)
	}
	if ok, err := s.Reserve(ctx, "c", t0, t0.Add(time.Hour)); err != nil || ok {
		t.Errorf("Reserve(c) after the sweep = %v, %v; want refused", ok, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Reserve(cctx, "d", t0, t0.Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve with a done context = %v, want context.Canceled", err)
	}
}
