package trust_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_telemetryCountsFailedCalls: a trust call that ends in an
// error counts in vouch.trust.calls by error.type, without a status, and
// records no runs; an answered call counts by its status as before. An
// operator alerting on failed trust calls finds them in the counter.
func TestService_telemetryCountsFailedCalls(t *testing.T) {
	rec := telemetrytest.New(t)
	down := routertest.Fail(errors.New("model down"))
	engine, err := router.NewEngine([]router.Session{{ID: 1, Worker: down}, {ID: 2, Worker: down}, {ID: 3, Worker: down}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(engine, trust.WithTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicySafe)); err == nil {
		t.Fatal("a call whose every run fails answered; want an error")
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := s.Call(cancelled, request(trust.ModeValidation, trust.PolicyFast)); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled call: %v, want context.Canceled", err)
	}
	got := map[string]int64{}
	for k, n := range rec.AllPoints(t) {
		if strings.HasPrefix(k, "vouch.trust.") {
			got[k] = n
		}
	}
	want := map[string]int64{
		"vouch.trust.calls error.type=all_replicas_failed,vouch.mode=validation,vouch.tier=safe": 1,
		"vouch.trust.calls error.type=canceled,vouch.mode=validation,vouch.tier=fast":            1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trust metrics (-want +got):\n%s", diff)
	}
}
