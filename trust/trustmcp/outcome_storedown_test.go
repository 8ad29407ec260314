package trustmcp_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// downStore is a reputation store that fails every write once down is
// set, as a database that went away does.
type downStore struct {
	reputation.Memory
	down atomic.Bool
}

func (s *downStore) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	if s.down.Load() {
		return nil, errors.New("connection refused")
	}
	return s.Memory.Load(ctx, keys)
}

func (s *downStore) Add(ctx context.Context, horizon float64, deltas []reputation.Delta) error {
	if s.down.Load() {
		return errors.New("connection refused")
	}
	return s.Memory.Add(ctx, horizon, deltas)
}

func (s *downStore) AddIf(ctx context.Context, horizon float64, cond reputation.Key, want reputation.Record, deltas []reputation.Delta) (bool, error) {
	if s.down.Load() {
		return false, errors.New("connection refused")
	}
	return s.Memory.AddIf(ctx, horizon, cond, want, deltas)
}

// TestReportOutcome_storeDown: report_outcome while the reputation store
// is out of reach is a tool error that says so and names the 503 the
// HTTP route answers, which the caller may send again; once the store is
// back the same report is accepted.
func TestReportOutcome_storeDown(t *testing.T) {
	store := new(downStore)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e, trust.WithoutExams())
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(trustmcp.Config{Caller: svc})
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, s)
	var out trust.Response
	decode(t, callTool(t, cs, trustmcp.ToolValidateClaim, map[string]any{"input": "2+2", "claimed_result": "4"}), &out)

	store.down.Store(true)
	res := callTool(t, cs, trustmcp.ToolReportOutcome, map[string]any{"trace_id": out.TraceID, "right": false})
	type answer struct {
		IsError bool
		Names   bool
	}
	got := answer{res.IsError, strings.Contains(text(res), "reputation store cannot be reached") && strings.Contains(text(res), "(503 unavailable)")}
	if diff := cmp.Diff(answer{true, true}, got); diff != "" {
		t.Errorf("report_outcome with the store down: %q (-want +got):\n%s", text(res), diff)
	}

	store.down.Store(false)
	if res := callTool(t, cs, trustmcp.ToolReportOutcome, map[string]any{"trace_id": out.TraceID, "right": false}); res.IsError {
		t.Errorf("the report again, the store back: %s", text(res))
	}
}
