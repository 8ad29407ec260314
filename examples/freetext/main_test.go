package main

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
	"github.com/vouchkit/vouch/trust"
)

// TestRun runs a small workload and holds the measured promises: at the
// defaults no changed fact counts as agreeing (exact, judged with faithful
// judges, embeddings at embedkey.DefaultThreshold), judged delegation
// settles most paraphrases, exact equality far fewer at the same tier
// (a plurality of two identical paraphrases still settles), and
// embeddings settle more than exact equality.
func TestRun(t *testing.T) {
	cfg := config{calls: 40, seed: 3, judgeErrors: []float64{0}, thresholds: []float64{embedkey.DefaultThreshold}}
	rows, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2*(1+1+len(profiles)) {
		t.Fatalf("%d rows, want one per way and tier", len(rows))
	}
	for _, r := range rows {
		if r.calls != cfg.calls || r.right+r.wrong+r.retry != r.calls {
			t.Errorf("%s/%s: %d calls, %d+%d+%d statuses", r.way, r.policy, r.calls, r.right, r.wrong, r.retry)
		}
		if r.agreeing != 0 {
			t.Errorf("%s/%s: %d changed facts counted as agreeing at the defaults, want 0", r.way, r.policy, r.agreeing)
		}
		if r.changed == 0 {
			t.Errorf("%s/%s: no changed fact was answered: the workload tests nothing", r.way, r.policy)
		}
		if settled := float64(r.right) / float64(r.calls); strings.HasPrefix(r.way, "judged") && settled < 0.9 {
			t.Errorf("%s/%s: judged settled %.2f, want at least 0.9", r.way, r.policy, settled)
		}
	}
	// The guard keeps most of the stand-in's paraphrases apart (their
	// words move), but embeddings still settle more than exact equality.
	exact := map[trust.Policy]int{}
	for _, r := range rows {
		if strings.HasPrefix(r.way, "exact") {
			exact[r.policy] = r.right
		}
	}
	for _, r := range rows {
		if strings.HasPrefix(r.way, "judged") && 4*exact[r.policy] > 3*r.right {
			t.Errorf("%s/%s: judged settled %d, exact equality %d: want exact at most three quarters of it", r.way, r.policy, r.right, exact[r.policy])
		}
		if strings.HasPrefix(r.way, "embeddings") && r.right <= exact[r.policy] {
			t.Errorf("%s/%s: settled %d, no more than exact equality's %d", r.way, r.policy, r.right, exact[r.policy])
		}
	}
	var buf bytes.Buffer
	writeTable(&buf, cfg, rows)
	if !strings.Contains(buf.String(), "| judged, judges err 0 | adaptive |") {
		t.Errorf("table:\n%s", buf.String())
	}
}

// TestRun_deterministic gives the same figures for the same seed, for
// exact equality and judged delegation. The embedding rows at adaptive can
// move by a call or two from run to run, so they are left out.
func TestRun_deterministic(t *testing.T) {
	cfg := config{calls: 40, seed: 5, judgeErrors: []float64{0.05}}
	a, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	b, err := run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("row %d: %+v then %+v", i, a[i], b[i])
		}
	}
}

func TestParseRates(t *testing.T) {
	if got, err := parseRates("-x", "0, 0.5,1", 0); err != nil || len(got) != 3 {
		t.Errorf("parseRates: %v %v", got, err)
	}
	for _, bad := range []string{"", "x", "1.5", "-0.1"} {
		if _, err := parseRates("-x", bad, 0); err == nil {
			t.Errorf("parseRates(%q): no error", bad)
		}
	}
	if _, err := parseRates("-thresholds", "0", 1e-9); err == nil {
		t.Error("a threshold of 0 was accepted")
	}
}

// TestMeasurePairs runs the pairs mode on the embedkey pairs with a
// stand-in model that finds every pair identical: similarity alone lets
// every changed fact agree, the guard none, and the check finds that
// model at fault.
func TestMeasurePairs(t *testing.T) {
	srv := embedkeytest.NewServer(func(string) []float64 { return []float64{1, 0} })
	defer srv.Close()
	var b strings.Builder
	err := measurePairs(t.Context(), &b, "../../router/embedkey/testdata/pairs.json", srv.URL+"/v1", "same", []float64{0.9})
	if err == nil || !strings.Contains(err.Error(), "does not tell paraphrases from changed facts") {
		t.Errorf("err = %v, want the model found at fault", err)
	}
	for _, want := range []string{"| guard and similarity (default) | 0.9 | ", " of 50 | 0 of 49 |", "| similarity alone | 0.9 | 50 of 50 | 49 of 49 |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
}

// TestCheckPairs checks the verdict on a table's figures: the guard may
// let no changed fact agree, and similarity alone must let paraphrases
// agree more often than changed facts at every threshold.
func TestCheckPairs(t *testing.T) {
	good := []pairCounts{
		{guard: true, threshold: 0.9, paraphrases: 50, agreeing: 9, changed: 49},
		{threshold: 0.9, paraphrases: 50, agreeing: 42, changed: 49, passed: 29},
		{threshold: 0.97, paraphrases: 50, agreeing: 18, changed: 49, passed: 10},
	}
	if err := checkPairs(good); err != nil {
		t.Errorf("a real model's figures: %v", err)
	}
	for _, tc := range []struct {
		name string
		bad  pairCounts
		want string
	}{
		{"the guard let a changed fact agree", pairCounts{guard: true, threshold: 0.8, paraphrases: 50, agreeing: 12, changed: 49, passed: 1}, "with the guard, 1 of 49"},
		{"no better than changed facts", pairCounts{threshold: 0.8, paraphrases: 50, agreeing: 40, changed: 40, passed: 32}, "at threshold 0.8, 40 of 50 paraphrases"},
	} {
		if err := checkPairs(append(slices.Clone(good), tc.bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}
