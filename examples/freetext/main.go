// Command freetext measures the two ways the trust service settles
// free-text delegations by what they say, against strict equality (the
// default), on a seeded workload: questions "who won the <year> Nobel
// Prize in <field>?" answered by a panel of five sessions in eight
// wordings of the true fact, or, at each session's rate, with one part of
// the fact changed (the laureate, the year or the field).
//
//   - judged: delegation.agreement "judged"; the sessions judge a
//     candidate answer by its facts, each verdict wrong at a stated rate.
//   - embeddings: trust.WithGrouper with router/embedkey, at its default
//     threshold and others, over loopback HTTP to a stand-in embeddings endpoint
//     whose vectors add a direction for the question's topic, one for
//     each part of the fact and one for the wording, weighted per profile.
//
// Since embedkey's lexical guard, the stand-in's figures tell only that no
// changed fact agrees: a real model's are measured with -pairs (below).
//
// It reports how often paraphrases settled on the true fact, how often a
// changed fact was counted as agreeing (or accepted), and the runs per
// call, at the safe and adaptive tiers. It runs the real trust.Service on
// a real router.Engine, in-process; only the workers and the embedding
// model are simulated.
//
//	go run ./examples/freetext [-calls N] [-seed S] [-judge-errors 0,0.05] [-thresholds 0.95,0.97] [-md FILE]
//
// With -pairs FILE -embed-url URL, it measures instead a real embedding
// model behind an OpenAI-compatible endpoint on the pairs of FILE
// (router/embedkey/testdata/pairs.json: paraphrases and answers that
// change one fact), with embedkey's guard and without, at -thresholds:
//
//	go run ./examples/freetext -pairs router/embedkey/testdata/pairs.json \
//	  -embed-url http://127.0.0.1:8090/v1 -embed-model all-MiniLM-L6-v2 -thresholds 0.85,0.9,0.95,0.97
//
// -calls, -seed, -judge-errors and -md apply to the workload only, and
// -embed-url and -embed-model to -pairs only: given in the other mode,
// like a positional argument or a bad value, they are a usage error
// (exit 2) naming the flag. -thresholds applies to both.
//
// It exits 1 after the table when the guard let a changed fact agree at
// any threshold, or when similarity alone let paraphrases agree no more
// often than changed facts at some threshold (a model whose embeddings
// carry no meaning), as interop/live/run.sh relies on.
//
// The same seed gives the same figures, except that the embedding rows at
// adaptive can move by a few calls from run to run. docs/LOCAL-MODELS.md
// gives the figures of a real model.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// wrongRates are the panel's sessions' rates of answers that change one
// fact.
var wrongRates = []float64{0.05, 0.10, 0.15, 0.20, 0.25}

type config struct {
	calls       int
	seed        uint64
	judgeErrors []float64
	thresholds  []float64
}

// parseRates reads a comma-separated list of numbers in [low, 1].
func parseRates(flagName, list string, low float64) ([]float64, error) {
	var out []float64
	for _, s := range strings.Split(list, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || !(v >= low && v <= 1) {
			return nil, fmt.Errorf("%s: %q is not a number in [%g, 1]", flagName, s, low)
		}
		out = append(out, v)
	}
	return out, nil
}

// way is one way of settling the delegations.
type way struct {
	name      string
	judged    bool
	judgeErr  float64
	profile   *profile
	threshold float64
}

// row is the figures of one way at one tier.
type row struct {
	way    string
	policy trust.Policy
	calls  int
	right  int // VALID with the true fact
	wrong  int // VALID with a changed fact
	retry  int
	// agreeing counts the changed facts counted as agreeing: runs whose
	// fact differs from the result's that backed it (exact, embeddings),
	// or candidates with a changed fact the judges accepted (judged).
	agreeing int
	// changed counts the runs (exact, embeddings) or candidates (judged)
	// whose fact differed from the result's or the truth.
	changed    int
	runs       int
	embeddings int64
}

func run(ctx context.Context, cfg config) ([]row, error) {
	ways := []way{{name: "exact (default)"}}
	for _, e := range cfg.judgeErrors {
		ways = append(ways, way{name: fmt.Sprintf("judged, judges err %g", e), judged: true, judgeErr: e})
	}
	for i := range profiles {
		for _, t := range cfg.thresholds {
			ways = append(ways, way{name: fmt.Sprintf("embeddings, %s, threshold %g", profiles[i].name, t), profile: &profiles[i], threshold: t})
		}
	}
	var rows []row
	for _, wy := range ways {
		for _, p := range []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive} {
			r, err := measure(ctx, cfg, wy, p)
			if err != nil {
				return nil, fmt.Errorf("%s at %s: %w", wy.name, p, err)
			}
			rows = append(rows, r)
		}
	}
	return rows, nil
}

// measure delegates every question once under way and tier p, on a fresh
// engine of five sessions.
func measure(ctx context.Context, cfg config, wy way, p trust.Policy) (row, error) {
	w := newWorkload(cfg.seed, cfg.calls, wrongRates, wy.judgeErr)
	workers := make([]router.Worker, len(wrongRates))
	for i := range workers {
		workers[i] = w.worker(router.SessionID(i + 1))
	}
	// A still clock: no run's latency or health depends on how busy the
	// machine is.
	still := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	engine, err := router.NewEngine(routertest.Sessions(1, 1, workers...), router.WithEngineClock(func() time.Time { return still }))
	if err != nil {
		return row{}, err
	}
	opts := []trust.Option{trust.WithSessionPool(1, 2, 3, 4, 5)}
	var srv *embedkeytest.Server
	if wy.profile != nil {
		prof := *wy.profile
		srv = embedkeytest.NewServer(func(text string) []float64 { return w.embed(prof, text) })
		defer srv.Close()
		g, err := embedkey.New(embedkey.Config{BaseURL: srv.URL + "/v1", Model: prof.name, Threshold: wy.threshold})
		if err != nil {
			return row{}, err
		}
		opts = append(opts, trust.WithGrouper(g))
	}
	svc, err := trust.New(engine, opts...)
	if err != nil {
		return row{}, err
	}
	r := row{way: wy.name, policy: p}
	for q, f := range w.questions {
		if err := ctx.Err(); err != nil {
			return row{}, err
		}
		req := &trust.Request{Mode: trust.ModeDelegation, Policy: p, Task: trust.Task{
			Type: "qa", Input: router.NewStringInput(question(q, f)), Spec: trust.JSON("Name the laureate, in one sentence."),
		}}
		if wy.judged {
			req.Delegation = &trust.DelegationOptions{Agreement: trust.AgreementJudged}
		}
		resp, err := svc.Call(ctx, req)
		if err != nil {
			return row{}, err
		}
		r.count(w, q, resp)
	}
	if srv != nil {
		r.embeddings = srv.Requests.Load()
	}
	return r, nil
}

// count adds one call's figures.
func (r *row) count(w *workload, q int, resp *trust.Response) {
	r.calls++
	r.runs += resp.Evidence.Redundancy
	right, _ := w.statesTruth(q, resp.Result)
	switch {
	case resp.Status == trust.StatusValid && right:
		r.right++
	case resp.Status == trust.StatusValid:
		r.wrong++
	default:
		r.retry++
	}
	if j := resp.Evidence.Judging; j != nil {
		for _, c := range j.Candidates {
			if c.Verdict == "" {
				continue
			}
			if ok, _ := w.statesTruth(q, c.Output); !ok {
				r.changed++
				if c.Verdict == trust.StatusValid {
					r.agreeing++
				}
			}
		}
		return
	}
	// The runs in order, each with its session's answer (the workers
	// answer deterministically), against the result's fact.
	var resultFact fact
	var s string
	if json.Unmarshal(resp.Result, &s) != nil {
		return
	}
	a, ok := w.lookup(s)
	if !ok {
		return
	}
	resultFact = a.fact
	dissent := map[int]bool{}
	for _, d := range resp.Evidence.Disagreements {
		dissent[d.Replica] = true
	}
	i := 0
	for _, st := range resp.Evidence.Steps {
		for _, id := range st.Sessions {
			if resp.Evidence.Verdicts[i] == router.LabelOK {
				_, ans := w.answerOf(q, id)
				if ans.fact != resultFact {
					r.changed++
					if resp.Status == trust.StatusValid && !dissent[i] {
						r.agreeing++
					}
				}
			}
			i++
		}
	}
}

func pct(n, d int) string {
	if d == 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(d))
}

func writeTable(out io.Writer, cfg config, rows []row) {
	fmt.Fprintf(out, "%d questions, seed %d; sessions change one fact at %v; embedkey.DefaultThreshold %g\n\n",
		cfg.calls, cfg.seed, wrongRates, embedkey.DefaultThreshold)
	fmt.Fprintln(out, "| way | tier | settled on the true fact | VALID with a changed fact | RETRY | changed facts counted as agreeing | runs per call | embedding requests per call |")
	fmt.Fprintln(out, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, r := range rows {
		emb := "–"
		if r.embeddings > 0 {
			emb = fmt.Sprintf("%.2f", float64(r.embeddings)/float64(r.calls))
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %d of %d | %.2f | %s |\n", r.way, r.policy,
			pct(r.right, r.calls), pct(r.wrong, r.calls), pct(r.retry, r.calls), r.agreeing, r.changed,
			float64(r.runs)/float64(r.calls), emb)
	}
}
