package router_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_selection checks which sessions a version 3 call runs on.
func TestEngine_selection(t *testing.T) {
	V := routertest.Verdict(valid)
	pooled := func(pools ...string) []router.Session {
		s := make([]router.Session, len(pools))
		for i, p := range pools {
			s[i] = router.Session{ID: router.SessionID(i + 1), Worker: V, Pool: p}
		}
		return s
	}
	tests := []struct {
		name     string
		sessions []router.Session
		first    router.SessionID
		pool     []router.SessionID
		tier     router.Tier
		replicas int
		want     [][]router.SessionID // sessions of successive calls
	}{
		{"rotates over every session", pooled("", "", "", ""), 0, nil, "", 1,
			[][]router.SessionID{{1}, {2}, {3}, {4}, {1}}},
		{"distinct pools first", pooled("a", "a", "a", "b", "b", "c"), 0, nil, "", 3,
			[][]router.SessionID{{1, 4, 6}, {2, 4, 6}, {3, 4, 6}, {4, 6, 1}, {5, 6, 1}, {6, 1, 4}}},
		{"then any pool", pooled("a", "a", "a", "b"), 0, nil, "", 3,
			[][]router.SessionID{{1, 4, 2}, {2, 4, 3}, {3, 4, 1}, {4, 1, 2}}},
		{"session pool in its order", pooled("", "", "", "", "", ""), 0, []router.SessionID{6, 2, 4}, "", 3,
			[][]router.SessionID{{6, 2, 4}, {2, 4, 6}}},
		{"session_id first", pooled("", "", "", ""), 3, nil, "", 3,
			[][]router.SessionID{{3, 1, 2}, {3, 2, 4}, {3, 4, 1}, {3, 1, 2}}},
		{"session_id outside the pool", pooled("", "", "", ""), 4, []router.SessionID{1, 2}, "", 3,
			[][]router.SessionID{{4, 1, 2}}},
		{"tier", []router.Session{
			{ID: 1, Worker: V, Tiers: []router.Tier{router.TierFast}},
			{ID: 2, Worker: V, Tiers: []router.Tier{router.TierSafe, router.TierOracle}},
			{ID: 3, Worker: V},
			{ID: 4, Worker: V, Tiers: []router.Tier{router.TierSafe}},
		}, 0, nil, router.TierSafe, 3, [][]router.SessionID{{2, 3, 4}, {3, 4, 2}}},
		{"session_id off tier is dropped", []router.Session{
			{ID: 1, Worker: V, Tiers: []router.Tier{router.TierFast}},
			{ID: 2, Worker: V},
		}, 1, nil, router.TierSafe, 1, [][]router.SessionID{{2}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, tt.sessions, router.WithReputation(nil)) // rotation, as before reputation
			for call, want := range tt.want {
				req := validateV3(tt.replicas, router.DisagreeReturnAll)
				req.SessionID, req.Consensus.SessionPool, req.Policy.Tier = tt.first, tt.pool, tt.tier
				got, err := e.ValidateV3(context.Background(), req)
				if err != nil {
					t.Fatalf("call %d: %v", call, err)
				}
				if ids := sessionsOf(got.Evidence.Runs); !cmp.Equal(ids, want) {
					t.Errorf("call %d ran on sessions %v, want %v", call, ids, want)
				}
			}
		})
	}
}

func TestEngine_selectionErrors(t *testing.T) {
	recs := []*routertest.Recorder{
		routertest.NewRecorder(routertest.Verdict(valid)),
		routertest.NewRecorder(routertest.Verdict(valid)),
	}
	sessions := []router.Session{
		{ID: 1, Worker: recs[0], Tiers: []router.Tier{router.TierFast}},
		{ID: 2, Worker: recs[1]},
	}
	e := newEngine(t, sessions)
	ctx := context.Background()
	tests := []struct {
		name   string
		req    func(*router.ValidateV3Request)
		status int
		code   router.Code
		fields []string
		detail string // in the problem's detail, when given
	}{
		{"unknown pool ids", func(r *router.ValidateV3Request) { r.Consensus.SessionPool = []router.SessionID{2, 7, 1, 8} },
			http.StatusBadRequest, "invalid_request", []string{"consensus.session_pool[1]", "consensus.session_pool[3]"}, ""},
		{"unknown session_id", func(r *router.ValidateV3Request) { r.SessionID = 5 },
			http.StatusBadRequest, "invalid_request", []string{"session_id"}, ""},
		// What the deployment can never serve is the request's mistake,
		// a 400 naming consensus.replicas, not a retryable 503. The
		// message counts the sessions there are, not what each offers.
		{"more replicas than sessions", func(r *router.ValidateV3Request) { r.Consensus.Replicas = 3 },
			http.StatusBadRequest, "invalid_request", []string{"consensus.replicas"},
			"3 replicas need 3 distinct sessions serving any tier; this router has 2, healthy or not, so it can never serve the call"},
		{"too few serve the tier", func(r *router.ValidateV3Request) { r.Policy.Tier, r.Consensus.Replicas = router.TierSafe, 3 },
			http.StatusBadRequest, "invalid_request", []string{"consensus.replicas"},
			`3 replicas need 3 distinct sessions serving tier "safe"; this router has 1, healthy or not, so it can never serve the call`},
		{"pool too small", func(r *router.ValidateV3Request) {
			r.Consensus.SessionPool, r.Consensus.Replicas = []router.SessionID{1, 2}, 3
		},
			http.StatusBadRequest, "invalid_request", []string{"consensus.replicas"},
			"3 replicas need 3 distinct sessions serving any tier; consensus.session_pool holds 2, healthy or not, so it can never serve the call"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := validateV3(1, "")
			tt.req(req)
			_, err := e.ValidateV3(ctx, req)
			p := asError(t, err, tt.status, tt.code)
			if diff := cmp.Diff(tt.fields, fields(p)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
			if !strings.Contains(p.Detail, tt.detail) {
				t.Errorf("detail %q, want it to hold %q", p.Detail, tt.detail)
			}
		})
	}
	if n := recs[0].Calls.Load() + recs[1].Calls.Load(); n != 0 {
		t.Errorf("workers called %d times by calls that failed selection, want 0", n)
	}
}

func TestEngine_selectionSkipsCoolingSessions(t *testing.T) {
	clk := newClock()
	bad := routertest.NewRecorder(routertest.Fail(errDown))
	good := routertest.NewRecorder(routertest.Verdict(valid))
	e := newEngine(t, []router.Session{{ID: 1, Worker: bad}, {ID: 2, Worker: good}, {ID: 3, Worker: good}},
		router.WithEngineClock(clk.Now), router.WithHealth(1, time.Minute))
	ctx := context.Background()
	if _, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeReturnAll)); err != nil {
		t.Fatalf("first call: %v", err) // session 1 fails once and cools down
	}
	_, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort))
	p := asError(t, err, http.StatusServiceUnavailable, "insufficient_sessions")
	if want := "; this router has 2 now ("; !strings.Contains(p.Detail, want) {
		t.Errorf("detail %q, want it to hold %q", p.Detail, want)
	}
	for range 4 {
		got, err := e.ValidateV3(ctx, validateV3(1, router.DisagreeBestEffort))
		if err != nil {
			t.Fatalf("one replica: %v", err)
		}
		if id := got.Evidence.Runs[0].SessionID; id == 1 {
			t.Errorf("a call ran on session 1 while it cooled down")
		}
	}
	clk.Advance(time.Minute)
	if _, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort)); err != nil {
		t.Errorf("after the cooldown: %v", err)
	}
	if got := bad.Calls.Load(); got != 2 {
		t.Errorf("failing session called %d times, want 2 (before and after its cooldown)", got)
	}
}
