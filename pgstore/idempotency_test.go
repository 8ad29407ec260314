package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestIdempotencyStore_postgres(t *testing.T) {
	routertest.TestIdempotencyStore(t, func(t *testing.T) (a, b router.IdempotencyStore) {
		dbs := openDBs(t, 2)
		return dbs[0].Idempotency(), dbs[1].Idempotency()
	})
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// A reservation whose server died is taken over once its lease lapses;
// the late server's Complete then leaves the new holder's response alone.
func TestIdempotencyStore_leaseLapses(t *testing.T) {
	dbs := openDBs(t, 2)
	a, b := dbs[0].Idempotency(), dbs[1].Idempotency()
	a.Lease, b.Lease = time.Minute, time.Minute
	ctx := context.Background()
	expires := t0.Add(24 * time.Hour)
	ea, err := a.Reserve(ctx, "k", "fp", t0, expires)
	if err != nil || ea.State != router.IdempotencyReserved {
		t.Fatalf("first Reserve = %+v, %v; want reserved", ea, err)
	}
	if e, err := b.Reserve(ctx, "k", "fp", t0.Add(time.Minute-time.Millisecond), expires); err != nil || e.State != router.IdempotencyInFlight {
		t.Fatalf("Reserve within the lease = %+v, %v; want in flight", e, err)
	}
	eb, err := b.Reserve(ctx, "k", "fp", t0.Add(time.Minute), expires)
	if err != nil || eb.State != router.IdempotencyReserved {
		t.Fatalf("Reserve once the lease lapsed = %+v, %v; want reserved", eb, err)
	}
	want := &router.StoredResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"by":"b"}`)}
	if err := b.Complete(ctx, "k", eb.Lease, want, t0.Add(2*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := a.Complete(ctx, "k", ea.Lease, &router.StoredResponse{Status: 200, Body: []byte(`{"by":"a"}`)}, t0.Add(3*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, "k", ea.Lease); err != nil {
		t.Fatal(err)
	}
	e, err := a.Reserve(ctx, "k", "fp", t0.Add(4*time.Minute), expires)
	if err != nil || e.State != router.IdempotencyCompleted {
		t.Fatalf("Reserve after completion = %+v, %v; want completed", e, err)
	}
	if diff := cmp.Diff(want, e.Response); diff != "" {
		t.Errorf("stored response (-want +got):\n%s", diff)
	}
}

func TestIdempotencyStore_DeleteExpired(t *testing.T) {
	s := openDB(t).Idempotency()
	s.Lease = time.Minute
	ctx := context.Background()
	for i, window := range []time.Duration{time.Hour, 2 * time.Hour} {
		key := fmt.Sprint("done-", i)
		e, err := s.Reserve(ctx, key, "fp", t0, t0.Add(window))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Complete(ctx, key, e.Lease, &router.StoredResponse{Status: 200}, t0); err != nil {
			t.Fatal(err)
		}
	}
	// In flight, window ended at +1h and lease at +1m: its server died.
	if _, err := s.Reserve(ctx, "abandoned", "fp", t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	// In flight with a lease beyond its window: its server still runs.
	s.Lease = 3 * time.Hour
	if _, err := s.Reserve(ctx, "running", "fp", t0, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.DeleteExpired(ctx, t0.Add(time.Hour)); err != nil || n != 2 {
		t.Errorf("DeleteExpired(+1h) = %d, %v; want 2 (done-0 and abandoned)", n, err)
	}
	if e, err := s.Reserve(ctx, "running", "fp", t0.Add(time.Hour), t0.Add(2*time.Hour)); err != nil || e.State != router.IdempotencyInFlight {
		t.Errorf("the running request's key after the sweep = %+v, %v; want in flight", e, err)
	}
	if e, err := s.Reserve(ctx, "done-1", "fp", t0.Add(time.Hour), t0.Add(2*time.Hour)); err != nil || e.State != router.IdempotencyCompleted {
		t.Errorf("done-1 after the sweep = %+v, %v; want completed", e, err)
	}
}

func TestIdempotencyStore_contextDone(t *testing.T) {
	s := openDB(t).Idempotency()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Reserve(ctx, "k", "fp", t0, t0.Add(time.Hour)); !errors.Is(err, context.Canceled) {
		t.Errorf("Reserve = %v, want context.Canceled", err)
	}
	if err := s.Complete(ctx, "k", "lease", &router.StoredResponse{Status: 200}, t0); !errors.Is(err, context.Canceled) {
		t.Errorf("Complete = %v, want context.Canceled", err)
	}
	if err := s.Release(ctx, "k", "lease"); !errors.Is(err, context.Canceled) {
		t.Errorf("Release = %v, want context.Canceled", err)
	}
	if e, err := s.Reserve(context.Background(), "k", "fp", t0, t0.Add(time.Hour)); err != nil || e.State != router.IdempotencyReserved {
		t.Errorf("Reserve after cancelled calls = %+v, %v; want the key free", e, err)
	}
}

// countingService answers every ValidateV2 with VALID after gate opens,
// counting the runs; the other operations are not used.
type countingService struct {
	router.Service
	runs atomic.Int32
	gate chan struct{}
}

func (s *countingService) ValidateV2(ctx context.Context, req *router.ValidateV2Request) (*router.ValidateV2Response, error) {
	n := s.runs.Add(1)
	if s.gate != nil {
		select {
		case <-s.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &router.ValidateV2Response{RequestID: req.RequestID, Verdict: "VALID", Confidence: 1, Reasons: []string{fmt.Sprint("run ", n)}}, nil
}

// twoServers serves svc from two Handlers over loopback, as two processes
// on one database would.
func twoServers(t *testing.T, svc router.Service) (a, b *httptest.Server) {
	dbs := openDBs(t, 2)
	servers := make([]*httptest.Server, 2)
	for i, db := range dbs {
		h, err := router.NewHandler(svc,
			router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})),
			router.WithIdempotency(db.Idempotency(), time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		servers[i] = httptest.NewServer(h)
		t.Cleanup(servers[i].Close)
	}
	return servers[0], servers[1]
}

type reply struct {
	status   int
	replayed string
	body     string
}

// post sends body to url's /api/v2/validate with the Idempotency-Key key.
// It reports a failed request with t.Error and returns the zero reply
// (status 0), never stopping the goroutine, so that it may run on any
// goroutine and its caller's check of the status fails.
func post(t *testing.T, url, key, body string) reply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+"/api/v2/validate", strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return reply{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer demo-key")
	req.Header.Set(router.HeaderIdempotencyKey, key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
	}
	return reply{resp.StatusCode, resp.Header.Get(router.HeaderIdempotentReplayed), string(b)}
}

const validateBody = `{"session_id":1,"request_id":"r-1","claim":{"type":"summary","output":"ok"},"policy":{"tier":"safe"}}`

// A key used on server A is replayed by server B without running the
// Service; the same key with another body gets 422 on either server.
func TestIdempotency_handlersShareKeys(t *testing.T) {
	svc := &countingService{}
	a, b := twoServers(t, svc)
	first := post(t, a.URL, "key-1", validateBody)
	if first.status != http.StatusOK {
		t.Fatalf("first call on A: %d %s", first.status, first.body)
	}
	again := post(t, b.URL, "key-1", validateBody)
	if diff := cmp.Diff(reply{first.status, "true", first.body}, again, cmp.AllowUnexported(reply{})); diff != "" {
		t.Errorf("repeat on B (-want +got):\n%s", diff)
	}
	if n := svc.runs.Load(); n != 1 {
		t.Errorf("the Service ran %d times, want once", n)
	}
	other := strings.Replace(validateBody, `"ok"`, `"changed"`, 1)
	for name, srv := range map[string]*httptest.Server{"A": a, "B": b} {
		if r := post(t, srv.URL, "key-1", other); r.status != http.StatusUnprocessableEntity {
			t.Errorf("key reused with another body on %s: status %d, want 422 (%s)", name, r.status, r.body)
		}
	}
}

// The same key sent concurrently to A and B runs the Service once; every
// caller gets its response.
func TestIdempotency_handlersConcurrentDuplicates(t *testing.T) {
	svc := &countingService{gate: make(chan struct{})}
	a, b := twoServers(t, svc)
	const n = 6
	replies := make([]reply, n)
	var wg sync.WaitGroup
	for i := range n {
		url := a.URL
		if i%2 == 1 {
			url = b.URL
		}
		wg.Go(func() { replies[i] = post(t, url, "key-2", validateBody) })
	}
	// Hold the one run a while, so that the others find the key in
	// flight (the assertions hold whichever way they find it).
	for svc.runs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
	close(svc.gate)
	wg.Wait()
	if got := svc.runs.Load(); got != 1 {
		t.Fatalf("the Service ran %d times, want once", got)
	}
	for i, r := range replies {
		if diff := cmp.Diff(replies[0].body, r.body, cmpopts.EquateEmpty()); r.status != http.StatusOK || diff != "" {
			t.Errorf("caller %d: status %d, body differs from caller 0's (-0 +%d):\n%s", i, r.status, i, diff)
		}
	}
}

var _ router.IdempotencyStore = (*pgstore.IdempotencyStore)(nil)
