package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// delegationCfg is the tests' delegation run: both GSM8K panels on the
// first 100 problems of the fixtures, 30 earlier calls, outcomes reported
// for none and 5% of the calls.
var delegationCfg = config{seed: 7, data: fixtures, delegationWarm: 30, realCalls: 100, outcomes: []float64{0, 0.05},
	only: []string{"gsm8k-small", "gsm8k-strong"}}

var (
	delegationOnce sync.Once
	delegationRep  *delegationReport
	delegationErr  error
)

// smallDelegation runs the delegation workloads on the fixtures, once
// for every test.
func smallDelegation(t *testing.T) *delegationReport {
	t.Helper()
	delegationOnce.Do(func() {
		delegationRep, delegationErr = simulateDelegation(context.Background(), delegationCfg, io.Discard)
	})
	if delegationErr != nil {
		t.Fatal(delegationErr)
	}
	return delegationRep
}

// gsmRows reads the GSM8K fixture by problem id.
func gsmRows(t *testing.T) map[string]map[string]string {
	rows := map[string]map[string]string{}
	for _, r := range readRows(t, filepath.Join(fixtures, "zeroeval-gsm8k", "gsm8k_answers.csv")) {
		rows[r["id"]] = r
	}
	return rows
}

func TestLoadProblems(t *testing.T) {
	t.Parallel()
	rows := gsmRows(t)
	for i := range delegationSpecs {
		spec := &delegationSpecs[i]
		tb, err := loadProblems(fixtures, spec, 7)
		if err != nil {
			t.Fatal(err)
		}
		if tb.len() != 200 || slices.IsSorted(tb.rows) {
			t.Errorf("%s: %d problems, sorted = %v; want 200 in a seeded order", spec.name, tb.len(), slices.IsSorted(tb.rows))
		}
		var failed [panelSize]int
		for i, id := range tb.rows {
			row := rows[id]
			if g, _ := strconv.ParseFloat(row["gold"], 64); tb.golds[i] != g {
				t.Errorf("%s problem %s: gold %v, want %s", spec.name, id, tb.golds[i], row["gold"])
			}
			for s, m := range spec.models {
				a := tb.answer(i, router.SessionID(s+1))
				if row[m] == "" {
					failed[s]++
					if !a.failed {
						t.Errorf("%s problem %s session %d: an empty cell answers %s, want a failed run", spec.name, id, s+1, a.output)
					}
					continue
				}
				// The cell's number as a JSON number: 18.0 is written 18.
				want := strings.TrimSuffix(row[m], ".0")
				if a.failed || string(a.output) != want {
					t.Errorf("%s problem %s session %d: answers %s (failed %v), want %s", spec.name, id, s+1, a.output, a.failed, want)
				}
			}
		}
		if failed != tb.failed || failed == [panelSize]int{} {
			t.Errorf("%s: failed runs %v, want %v (and some)", spec.name, tb.failed, failed)
		}
	}
	if _, err := loadProblems(t.TempDir(), &delegationSpecs[0], 1); err == nil || !strings.Contains(err.Error(), "-data") {
		t.Errorf("an empty folder: error %v, want one naming -data", err)
	}
}

func TestEqual(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		result string
		gold   float64
		want   bool
	}{
		{`18`, 18, true}, {`18.0`, 18, true}, {`"18"`, 18, true}, {`1.8e1`, 18, true}, {`-3.5`, -3.5, true},
		{`17`, 18, false}, {`18.001`, 18, false}, {`null`, 18, false}, {`"eighteen"`, 18, false}, {`[18]`, 18, false}, {``, 18, false},
	} {
		if got := equal(json.RawMessage(tt.result), tt.gold); got != tt.want {
			t.Errorf("equal(%s, %v) = %v, want %v", tt.result, tt.gold, got, tt.want)
		}
	}
}

func TestSimulateDelegation(t *testing.T) {
	t.Parallel()
	rep := smallDelegation(t)
	for _, tb := range rep.tables {
		name := tb.spec.name
		for _, agg := range aggregations {
			for _, pol := range tiers {
				for _, st := range delegationCfg.settings() {
					calls := rep.get(tb, agg, pol, st)
					if len(calls) != tb.len() {
						t.Fatalf("%s %s %s %s: %d calls, want %d", name, agg, pol, st, len(calls), tb.len())
					}
					for i, k := range calls {
						if lo, hi := runsOf(pol, st.rep); k.launched > hi || (k.launched < lo && k.status != trust.StatusRetry) {
							t.Errorf("%s %s %s claim %d: %d runs, want %d to %d", name, pol, st, i, k.launched, lo, hi)
						}
						if k.correct && !k.answered {
							t.Errorf("%s %s %s problem %d: right without an answer (%s)", name, pol, st, i, k.status)
						}
						if want := st.rep == on && reports(delegationCfg.seed, 0, i, st.outcomes) && k.answered; k.reported != want {
							t.Errorf("%s %s %s problem %d: reported = %v, want %v", name, pol, st, i, k.reported, want)
						}
						// Fast with reputation off answers with the one model it ran.
						if pol == trust.PolicyFast && st.rep == off {
							s := slices.Index(k.runs[:], 1) + 1
							a := tb.answer(i, router.SessionID(s))
							if want := !a.failed && equal(a.output, tb.golds[i]); k.correct != want || k.answered == a.failed {
								t.Errorf("%s fast problem %d on session %d (answer %s, failed %v, gold %v): correct %v, answered %v", name, i, s, a.output, a.failed, tb.golds[i], k.correct, k.answered)
							}
						}
					}
				}
			}
		}
		// The plurality of 5, counted here: the largest group of equal
		// numbers, the earliest session's on a tie; the median of 5, the
		// lower median of the numbers.
		for i := range tb.len() {
			count := map[float64]int{}
			var order, numbers []float64
			for s := router.SessionID(1); s <= panelSize; s++ {
				if a := tb.answer(i, s); !a.failed {
					x, _ := strconv.ParseFloat(string(a.output), 64)
					if count[x] == 0 {
						order = append(order, x)
					}
					count[x]++
					numbers = append(numbers, x)
				}
			}
			slices.Sort(numbers)
			if k, want := rep.median[name][i], numbers[(len(numbers)+1)/2-1] == tb.golds[i]; k.correct != want {
				t.Errorf("%s problem %d: median of 5 correct = %v, want %v (numbers %v, gold %v)", name, i, k.correct, want, numbers, tb.golds[i])
			}
			var win float64
			for _, x := range order {
				if count[x] > count[win] {
					win = x
				}
			}
			if k := rep.plurality[name][i]; k.correct != (win == tb.golds[i]) {
				t.Errorf("%s problem %d: plurality of 5 correct = %v, want %v (counts %v, gold %v)", name, i, k.correct, win == tb.golds[i], count, tb.golds[i])
			}
		}
	}
}

// TestSimulateDelegation_today holds every reputation-off delegation of
// delegationCfg to testdata/delegation-today.golden (written by `go test
// ./examples/accuracy -run TestSimulateDelegation_today -update`), as
// TestSimulateReal_today does for the validation workloads.
func TestSimulateDelegation_today(t *testing.T) {
	t.Parallel()
	rep := smallDelegation(t)
	var got bytes.Buffer
	for _, tb := range rep.tables {
		for _, pol := range tiers {
			for i, k := range rep.get(tb, plurality, pol, setting{rep: off}) {
				fmt.Fprintf(&got, "%s %s %s %s %v %s %d %v\n", tb.spec.name, pol, tb.rows[i], k.status, k.correct,
					strconv.FormatFloat(k.confidence, 'g', -1, 64), k.launched, k.runs)
			}
		}
	}
	path := filepath.Join("testdata", "delegation-today.golden")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(golden(t, path, got.String()), strings.Split(got.String(), "\n")); diff != "" {
		t.Errorf("reputation off on the fixtures differs from today's engine (-today +now):\n%s", diff)
	}
}

// TestMeasureDelegation_failing runs the oracle tier on a panel one of
// whose models gave no number on any problem. The session stays in use
// (the measurement keeps no cooldown, see newEngine): every call runs
// all five sessions and answers with the four numbers, where a cooldown
// would have the router refuse the calls that need all five.
func TestMeasureDelegation_failing(t *testing.T) {
	t.Parallel()
	const n = 12
	ps := &problems{golds: make([]float64, n), answers: make([][panelSize]answer, n)}
	for i := range ps.answers {
		ps.golds[i] = 7
		for s := range ps.answers[i] {
			ps.answers[i][s] = answer{output: json.RawMessage("7"), latency: float64(s)}
		}
		ps.answers[i][2].failed = true
	}
	calls, _, _, err := measureDelegation(context.Background(), 1, cell{policy: trust.PolicyOracle, rep: off}, plurality, ps)
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range calls {
		if !k.correct || k.launched != panelSize {
			t.Errorf("problem %d: %+v, want a right answer of five runs", i, k)
		}
	}
}
