package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"

	"github.com/vouchkit/vouch/router"
)

// The quickstart's workers are small deterministic programs standing in for
// models. A careful worker judges a claim by a toy non-hallucination rule:
// every capitalized word of the claim must appear in the task's input. It
// is sure of short claims (confidence 0.95) and unsure of long ones (0.6);
// the trust service reports these in each run, and by default does not
// let one run's confidence settle an adaptive call. A sloppy worker
// approves everything, which is the dissent adaptive adds runs after.

// careful returns the worker of a careful session.
func careful() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		input := taskInput(job)
		switch job.Kind {
		case router.KindDelegate:
			return &router.Result{
				Output:     firstSentence(input),
				Confidence: 0.9,
				Steps:      []router.Step{{Description: "kept the first sentence"}},
			}, nil
		case router.KindValidate:
			var claim string
			if err := json.Unmarshal(job.Claim.Output, &claim); err != nil {
				return &router.Result{Verdict: router.VerdictNeedsSpec, Confidence: 0.9, Reasons: []string{"the claim is not text"}}, nil
			}
			conf := 0.95
			if len(strings.Fields(claim)) > 8 {
				conf = 0.6
			}
			for _, name := range names(claim) {
				if !strings.Contains(input, name) {
					return &router.Result{Verdict: router.VerdictInvalid, Confidence: conf,
						Reasons: []string{fmt.Sprintf("%q is not in the input", name)}}, nil
				}
			}
			return &router.Result{Verdict: router.VerdictValid, Confidence: conf, Reasons: []string{"every name is in the input"}}, nil
		}
		return nil, fmt.Errorf("quickstart: no rule for %s jobs", job.Kind)
	})
}

// sloppy returns the worker of a session that approves every claim.
func sloppy() router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if job.Kind != router.KindValidate {
			return careful().Work(ctx, job)
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"looks fine"}}, nil
	})
}

// taskInput is the text of the task: a delegation's input, or the input of
// the task a validation judges.
func taskInput(job *router.Job) string {
	in := job.Input
	if !job.TaskInput.IsZero() {
		in = job.TaskInput
	}
	s, _ := in.String()
	return s
}

func firstSentence(s string) string {
	if i := strings.IndexAny(s, ".!?"); i >= 0 {
		return s[:i+1]
	}
	return s
}

// names returns the capitalized words of s after its first word (which is
// capitalized anyway), without punctuation.
func names(s string) []string {
	var out []string
	for i, w := range strings.Fields(s) {
		w = strings.TrimFunc(w, func(r rune) bool { return !unicode.IsLetter(r) })
		if i > 0 && w != "" && unicode.IsUpper([]rune(w)[0]) {
			out = append(out, w)
		}
	}
	return out
}
