package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
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

// fixtures is the folder of synthetic rows in the real data's layouts
// (testdata/real-llm-data/README.md).
const fixtures = "testdata/real-llm-data"

// realCfg is the tests' real-data run: every real-data workload on the
// first 120 claims of the fixtures, 50 earlier calls, outcomes reported
// for none and 5% of the calls.
var realCfg = config{seed: 7, data: fixtures, realWarm: 50, realCalls: 120, outcomes: []float64{0, 0.05},
	only: []string{"mmlu-strong", "mmlu-open", "emotion"}}

var (
	realOnce sync.Once
	realRep  *realReport
	realErr  error
)

// smallReal runs the real-data workloads on the fixtures, once for every
// test.
func smallReal(t *testing.T) *realReport {
	t.Helper()
	realOnce.Do(func() { realRep, realErr = simulateReal(context.Background(), realCfg, io.Discard) })
	if realErr != nil {
		t.Fatal(realErr)
	}
	return realRep
}

// readRows reads a fixture's rows as maps from column to cell.
func readRows(t *testing.T, path string) []map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]string
	for _, rec := range recs[1:] {
		row := map[string]string{}
		for j, h := range recs[0] {
			row[h] = rec[j]
		}
		rows = append(rows, row)
	}
	return rows
}

func TestLoadMMLUPro(t *testing.T) {
	t.Parallel()
	rows := map[string]map[string]string{}
	for _, r := range readRows(t, filepath.Join(fixtures, "mmlu-pro", "mmlu_pro_predictions.csv")) {
		rows[r["question_id"]] = r
	}
	for _, tt := range []struct {
		spec    *panelSpec
		dropped dropped
	}{
		{&panelSpecs[0], dropped{disputed: 2, missing: 5}}, // 1003, 1004; 1010 to 1014 lack DeepSeek-Coder-V2
		{&panelSpecs[1], dropped{disputed: 2, missing: 1}}, // 1020 lacks Yi-34B
	} {
		tb, err := loadTable(fixtures, tt.spec, 7)
		if err != nil {
			t.Fatal(err)
		}
		if tb.dropped != tt.dropped || tb.len() != 300-tt.dropped.disputed-tt.dropped.missing {
			t.Errorf("%s: %d claims, dropped %+v; want %d, %+v", tt.spec.name, tb.len(), tb.dropped, 300-tt.dropped.disputed-tt.dropped.missing, tt.dropped)
		}
		if slices.IsSorted(tb.rows) {
			t.Errorf("%s: the claims are in the file's order, want a seeded shuffle", tt.spec.name)
		}
		sellers := map[string]bool{}
		for i, id := range tb.rows {
			row := rows[id]
			if want := verdictOf(tb.claimed[i] == row["gold"]); tb.truths[i] != want {
				t.Errorf("%s question %s: truth %s, want %s (claimed %s, gold %s)", tt.spec.name, id, tb.truths[i], want, tb.claimed[i], row["gold"])
			}
			// The claim is the answer of a model outside the panel.
			from := ""
			for _, m := range tb.sellers {
				if row[m] == tb.claimed[i] {
					from = m
				}
			}
			if from == "" || slices.Contains(tt.spec.models[:], from) || tb.claimed[i] == "" {
				t.Errorf("%s question %s: claimed %q, the answer of no seller", tt.spec.name, id, tb.claimed[i])
			}
			sellers[tb.claimed[i]+from] = true
			for s, m := range tt.spec.models {
				a := tb.answer(i, router.SessionID(s+1))
				if want := verdictOf(row[m] == tb.claimed[i]); a.verdict != want || a.confidence != noConfidence {
					t.Errorf("%s question %s session %d (%s answered %q, claimed %q): %s at %v, want %s at %v",
						tt.spec.name, id, s+1, m, row[m], tb.claimed[i], a.verdict, a.confidence, want, noConfidence)
				}
			}
		}
		if len(sellers) < 10 {
			t.Errorf("%s: the claims come from %d seller answers, want them drawn among several", tt.spec.name, len(sellers))
		}
	}
	// The same seed draws the same claims, another seed others.
	a, _ := loadTable(fixtures, &panelSpecs[0], 7)
	b, _ := loadTable(fixtures, &panelSpecs[0], 7)
	c, _ := loadTable(fixtures, &panelSpecs[0], 8)
	if !cmp.Equal(a.claimed, b.claimed) || cmp.Equal(a.rows, c.rows) {
		t.Errorf("seed 7 twice gives the same claims = %v, seeds 7 and 8 give the same order = %v; want true, false", cmp.Equal(a.claimed, b.claimed), cmp.Equal(a.rows, c.rows))
	}
}

func TestLoadEmotion(t *testing.T) {
	t.Parallel()
	// probs[text][model] from the fixture, by the softmax worked here.
	probs := map[string]map[string][]float64{}
	gold := map[string]string{}
	for _, r := range readRows(t, filepath.Join(fixtures, "uncertainty-bench-emotion", "emotion_logits_long.csv")) {
		var p []float64
		var sum float64
		for _, o := range emotionOptions {
			l, err := strconv.ParseFloat(r["logit_"+o], 64)
			if err != nil {
				t.Fatal(err)
			}
			p = append(p, math.Exp(l))
			sum += math.Exp(l)
		}
		for k := range p {
			p[k] /= sum
		}
		if probs[r["id"]] == nil {
			probs[r["id"]] = map[string][]float64{}
		}
		probs[r["id"]][r["model"]] = p
		gold[r["id"]] = r["gold"]
	}
	spec := &panelSpecs[2]
	tb, err := loadTable(fixtures, spec, 7)
	if err != nil {
		t.Fatal(err)
	}
	if want := (dropped{missing: 1}); tb.dropped != want || tb.len() != 239 { // Qwen-7B has no row for text 7
		t.Errorf("%d claims, dropped %+v; want 239, %+v", tb.len(), tb.dropped, want)
	}
	if !cmp.Equal(tb.sellers, []string{"seller-a", "seller-b"}) {
		t.Errorf("sellers %v, want seller-a and seller-b", tb.sellers)
	}
	for i, id := range tb.rows {
		k := slices.Index(emotionOptions[:], tb.claimed[i])
		if want := verdictOf(tb.claimed[i] == gold[id]); tb.truths[i] != want {
			t.Errorf("text %s: truth %s, want %s", id, tb.truths[i], want)
		}
		for s, m := range spec.models {
			p := probs[id][m]
			a := tb.answer(i, router.SessionID(s+1))
			// VALID when the model's most probable option is the claimed
			// one, stating the probability it gives it; INVALID stating
			// one minus that.
			want, conf := router.VerdictInvalid, 1-p[k]
			if slices.Index(p, slices.Max(p)) == k {
				want, conf = router.VerdictValid, p[k]
			}
			if a.verdict != want || math.Abs(a.confidence-conf) > 1e-12 {
				t.Errorf("text %s session %d (%s): %s at %v, want %s at %v", id, s+1, m, a.verdict, a.confidence, want, conf)
			}
		}
	}
	// A hand-worked softmax: F five times as likely as each other option.
	p := softmax([len(emotionOptions)]float64{0, 0, 0, 0, 0, math.Log(5)})
	if want := [...]float64{0.1, 0.1, 0.1, 0.1, 0.1, 0.5}; !cmp.Equal(p, want, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-12 })) || argmax(p) != 5 {
		t.Errorf("softmax = %v, argmax %d; want %v, 5", p, argmax(p), want)
	}
}

func TestLoadTable_badInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(path, s string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, path)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, path), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("mmlu-pro/mmlu_pro_predictions.csv", "question_id,gold,gold_disputed,gpt-4o-2024-05-13(early-run)\n1,A,0,A\n")
	write("uncertainty-bench-emotion/emotion_logits_long.csv", "model,id,gold,logit_A,logit_B,logit_C,logit_D,logit_E,logit_F\nMistral-7B-v0.1,0,A,1,2,x,4,5,6\n")
	for spec, want := range map[*panelSpec]string{
		&panelSpecs[0]: `no column "gemini-1.5-pro-002"`,
		&panelSpecs[2]: `logit_C is not a finite number: "x"`,
	} {
		if _, err := loadTable(dir, spec, 1); err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "-data") {
			t.Errorf("%s: error %v, want one naming -data and saying %s", spec.name, err, want)
		}
	}
	if _, err := loadTable(t.TempDir(), &panelSpecs[1], 1); err == nil || !strings.Contains(err.Error(), "mmlu_pro_predictions.csv") {
		t.Errorf("an empty folder: error %v, want one naming the file", err)
	}
}

func TestSimulateReal(t *testing.T) {
	t.Parallel()
	rep := smallReal(t)
	for _, tb := range rep.tables {
		name := tb.spec.name
		for _, pol := range tiers {
			for _, st := range realCfg.settings() {
				cs := []cell{{workload: name, policy: pol, rep: st.rep, outcomes: st.outcomes}}
				if pol == trust.PolicyFast && st.rep == on {
					cs = append(cs, cell{workload: name, policy: pol, rep: on, outcomes: st.outcomes, shared: true})
				}
				for _, c := range cs {
					calls := rep.cells[c]
					if len(calls) != tb.len() {
						t.Fatalf("%s: %d calls, want %d", c, len(calls), tb.len())
					}
					drawn := 0
					for i, k := range calls {
						if lo, hi := runsOf(pol, c.rep); k.launched < lo || k.launched > hi {
							t.Errorf("%s claim %d: %d runs, want %d to %d", c, i, k.launched, lo, hi)
						}
						if k.correct != (k.status == trust.Status(tb.truths[i])) {
							t.Errorf("%s claim %d: correct = %v for status %s, truth %s", c, i, k.correct, k.status, tb.truths[i])
						}
						// The host reports the verdicts of the same seeded claims
						// in every cell: every answered call, and a RETRY unless
						// its votes tied.
						if drawn := c.rep == on && reports(realCfg.seed, c.draw, i, c.outcomes); k.reported && !drawn || drawn && k.answered && !k.reported {
							t.Errorf("%s claim %d (%s): reported = %v, drawn %v", c, i, k.status, k.reported, drawn)
						}
						if reports(realCfg.seed, c.draw, i, c.outcomes) {
							drawn++
						}
					}
					if c.outcomes == 0.05 && (drawn < tb.len()/50 || drawn > tb.len()/10) {
						t.Errorf("%s: %d claims drawn for outcome reports of %d, want about 5%%", c, drawn, tb.len())
					}
				}
			}
		}
		// The references: the majority of the five sessions' votes, each
		// session alone, and the share of claims a majority got wrong.
		wrong := 0
		for i := range tb.len() {
			right := 0
			for s := router.SessionID(1); s <= panelSize; s++ {
				a := tb.answer(i, s)
				if a.verdict == tb.truths[i] {
					right++
				}
				if k := rep.single[name][s-1][i]; k.correct != (a.verdict == tb.truths[i]) || k.confidence != a.confidence || k.launched != 1 {
					t.Errorf("%s claim %d: session %d alone %+v, want its answer %+v", name, i, s, k, a)
				}
			}
			if got := rep.five[name][i].correct; got != (right >= 3) {
				t.Errorf("%s claim %d: majority of 5 correct = %v with %d of 5 right", name, i, got, right)
			}
			if right < 3 && i >= realCfg.realWarm {
				wrong++
			}
		}
		if got := rep.wrongTogether(tb, rep.five[name]).calls; got != wrong || wrong == 0 {
			t.Errorf("%s: %d measured claims wrong together, want %d (and some)", name, got, wrong)
		}
		b, calls := rep.best(tb)
		for s := range panelSize {
			if rep.measured(rep.single[name][s]).accuracy() > rep.measured(calls).accuracy() {
				t.Errorf("%s: session %d is more accurate than the best, session %d", name, s+1, b)
			}
		}
	}
	// Outcomes reach the book: reporting 5% changes what adaptive answers.
	for _, tb := range rep.tables {
		a := rep.get(tb, trust.PolicyAdaptive, setting{rep: on})
		b := rep.get(tb, trust.PolicyAdaptive, setting{rep: on, outcomes: 0.05})
		if cmp.Equal(a, b, cmp.AllowUnexported(call{}), cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".reported" }, cmp.Ignore())) {
			t.Errorf("%s: adaptive answered every call the same with 5%% of outcomes reported as with none", tb.spec.name)
		}
	}
}

// TestSimulateReal_today checks the real-data run with reputation off, a
// figure at a time, against testdata/real-today.golden: written by
// `go test ./examples/accuracy -run TestSimulateReal_today -update`, it
// holds every call of every tier on realCfg's claims (status, confidence
// to the last bit, runs and their sessions), which reputation off must
// answer as today's engine does.
func TestSimulateReal_today(t *testing.T) {
	t.Parallel()
	rep := smallReal(t)
	var got bytes.Buffer
	for _, tb := range rep.tables {
		for _, pol := range tiers {
			for i, k := range rep.get(tb, pol, setting{rep: off}) {
				fmt.Fprintf(&got, "%s %s %s %s %s %d %v\n", tb.spec.name, pol, tb.rows[i], k.status,
					strconv.FormatFloat(k.confidence, 'g', -1, 64), k.launched, k.runs)
			}
		}
	}
	path := filepath.Join("testdata", "real-today.golden")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(golden(t, path, got.String()), strings.Split(got.String(), "\n")); diff != "" {
		t.Errorf("reputation off on the fixtures differs from today's engine (-today +now):\n%s", diff)
	}
}

func TestRun_realData(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	md := filepath.Join(dir, "acc.md")
	cfg := realCfg
	cfg.only = []string{"emotion", "gsm8k-small", "easy"}
	// The tables' layout, not their figures: few calls of each workload.
	cfg.calls, cfg.episode, cfg.curve = 30, 30, []int{0, 10}
	cfg.realCalls, cfg.realWarm, cfg.delegationWarm = 60, 30, 30
	if err := run(context.Background(), cfg, md, dir, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{fmt.Sprintf("-data testdata/real-llm-data -seed 7 -warm %d -outcomes 0,0.05", cfg.realWarm), "-only emotion`", "### " + panelSpecs[2].title,
		"| adaptive | on, 5% outcomes |", "| best single session (1, reference) | — |", "Wrong together: on ", "### Targets on the real panels",
		"Learned at the end of adaptive's episode (reputation on, 5% outcomes)", "| session | right as a judge | share of adaptive's runs | learned reliability, seed's draw |\n",
		"| emotion | on, 5% outcomes | adaptive at most 2.50 runs per call |", "with no outcomes reported, safe and adaptive ECE within 0.01",
		"### " + delegationSpecs[0].title, "### Targets of the delegation workloads", "| best model (", "| plurality of 5 (reference) | plurality | — |", "| median of 5 (reference) | median | — |", "| adaptive | median | on, 5% outcomes |",
		"| gsm8k-small | on, 5% outcomes | plurality: adaptive at most 3.0 runs per call |",
		"### " + workloads[1].title} {
		if !bytes.Contains(table, []byte(w)) {
			t.Errorf("the tables lack %q:\n%s", w, table)
		}
	}
	if a, b, c := bytes.Index(table, []byte(panelSpecs[2].title)), bytes.Index(table, []byte(delegationSpecs[0].title)), bytes.Index(table, []byte(workloads[1].title)); a > b || b > c {
		t.Errorf("the workloads are not in the order validation, delegation, simulated")
	}
	for _, name := range []string{"emotion", "easy"} {
		chart, err := os.ReadFile(filepath.Join(dir, "reliability-"+name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(chart, []byte("<svg")) {
			t.Errorf("the chart of %s is not an SVG: %.200s", name, chart)
		}
	}
	// A real-data workload needs its folder.
	cfg.data = ""
	if err := run(context.Background(), cfg, md, "", io.Discard, io.Discard); err == nil || !strings.Contains(err.Error(), "-data") {
		t.Errorf("-only emotion without -data: error %v, want one naming -data", err)
	}
}
