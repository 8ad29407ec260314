package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

// FuzzHonest gives the honest demo worker any text, as callers send it
// through the routes: a claimed output (any JSON, or a string), a
// statement, an objective. It never panics; it answers each kind with a
// verdict of that kind (a delegation with an output JSON can encode) and
// a confidence within [0, 1]; it answers the same job alike twice; and an
// equation of integers of up to nine digits, written alone, is judged by
// whether it holds.
func FuzzHonest(f *testing.F) {
	f.Add(`"17 * 3 = 51"`, "100 / 4 = 25", "what is 12 × 12?", int64(17), int64(3), uint8(2), int64(51))
	f.Add(`{"result":"6 × 7 = 42"}`, "The sky is green.", "summarize the report", int64(-999999999), int64(-1), uint8(3), int64(999999999))
	f.Add(`"2 + 2 = 4, and 9 - 12 = 3"`, "7 / 2 = 3", "40 - 2", int64(7), int64(0), uint8(3), int64(0))
	f.Add(`12345678901234567891`, "1234567890 * 2 = 2469135780", "5 - -3", int64(999999999), int64(999999999), uint8(2), int64(999999998000000001))
	f.Add(`not JSON`, "-0 - -0 = -0", "\xff", int64(5), int64(-3), uint8(1), int64(8))
	w := honest()
	ops := []string{"+", "-", "*", "/", "×"}
	f.Fuzz(func(t *testing.T, claim, statement, objective string, a, b int64, op uint8, c int64) {
		output := json.RawMessage(claim)
		if !json.Valid(output) {
			output, _ = json.Marshal(claim)
		}
		jobs := []*router.Job{
			{Kind: router.KindValidate, Claim: &router.Claim{Type: "tool_output", Output: output}},
			{Kind: router.KindFactcheck, Statement: statement},
			{Kind: router.KindDelegate, Objective: objective, Input: router.NewStringInput(claim)},
		}
		for _, job := range jobs {
			res, err := w.Work(context.Background(), job)
			if err != nil || res == nil {
				t.Fatalf("%s job %+v: %v, %v", job.Kind, job, res, err)
			}
			again, err := w.Work(context.Background(), job)
			if err != nil || !cmp.Equal(res, again) {
				t.Fatalf("%s job %+v: answered %+v, then %+v (%v)", job.Kind, job, res, again, err)
			}
			var kinds []router.Verdict
			switch job.Kind {
			case router.KindValidate:
				kinds = []router.Verdict{router.VerdictValid, router.VerdictInvalid, router.VerdictNeedsSpec}
			case router.KindFactcheck:
				kinds = []router.Verdict{router.VerdictTrue, router.VerdictFalse}
			default:
				kinds = []router.Verdict{""}
				if _, err := json.Marshal(res.Output); err != nil || res.Output == nil {
					t.Fatalf("delegation %+v: output %v (%v)", job, res.Output, err)
				}
			}
			if !slices.Contains(kinds, res.Verdict) || !(res.Confidence >= 0 && res.Confidence <= 1) {
				t.Fatalf("%s job %+v: verdict %q, confidence %v", job.Kind, job, res.Verdict, res.Confidence)
			}
		}
		const nine, twelve = 999999999, 999999999999
		if a < -nine || a > nine || b < -nine || b > nine || c < -twelve || c > twelve {
			return
		}
		o := ops[int(op)%len(ops)]
		var want int64
		holds := true
		switch o {
		case "+":
			want = a + b
		case "-":
			want = a - b
		case "*", "×":
			want = a * b
		default:
			holds = b != 0 && a%b == 0
			if holds {
				want = a / b
			}
		}
		holds = holds && want == c
		eq := fmt.Sprintf("%d %s %d = %d", a, o, b, c)
		res, err := w.Work(context.Background(), &router.Job{Kind: router.KindFactcheck, Statement: eq})
		if err != nil || (res.Verdict == router.VerdictTrue) != holds {
			t.Fatalf("%q: %v %v (%v), want true %t", eq, res.Verdict, res.Reasons, err, holds)
		}
	})
}
