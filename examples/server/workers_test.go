package main

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

func TestHonest_rules(t *testing.T) {
	t.Parallel()
	validate := func(output string) *router.Job {
		return &router.Job{Kind: router.KindValidate, Claim: &router.Claim{Type: "tool_output", Output: json.RawMessage(output)}}
	}
	tests := []struct {
		name    string
		job     *router.Job
		verdict router.Verdict
		reasons []string
		output  any
	}{
		{"true equation", validate(`"17 * 3 = 51"`), router.VerdictValid, []string{"17 * 3 = 51 holds"}, nil},
		{"false equation", validate(`"17 * 3 = 50"`), router.VerdictInvalid, []string{"17 * 3 is 51, not 50"}, nil},
		{"one false of two", validate(`"2 + 2 = 4, and 9 - 12 = 3"`), router.VerdictInvalid,
			[]string{"2 + 2 = 4 holds", "9 - 12 is -3, not 3"}, nil},
		{"inexact division", validate(`"7 / 2 = 3"`), router.VerdictInvalid, []string{"7 / 2 is undefined"}, nil},
		{"JSON output", validate(`{"result":"6 × 7 = 42"}`), router.VerdictValid, []string{"6 × 7 = 42 holds"}, nil},
		{"nothing to check", validate(`"Paris is the capital of France."`), router.VerdictNeedsSpec,
			[]string{"no equation to check: the demo workers check integer arithmetic such as 17 * 3 = 51"}, nil},
		{"true statement", &router.Job{Kind: router.KindFactcheck, Statement: "100 / 4 = 25"}, router.VerdictTrue,
			[]string{"100 / 4 = 25 holds"}, nil},
		{"unverifiable statement", &router.Job{Kind: router.KindFactcheck, Statement: "The sky is green."}, router.VerdictFalse,
			[]string{"no equation to check: the demo workers check integer arithmetic such as 17 * 3 = 51"}, nil},
		{"delegation computes", &router.Job{Kind: router.KindDelegate, Objective: "what is 12 × 12?"}, "", nil,
			map[string]any{"expression": "12 × 12", "value": int64(144)}},
		{"delegation from input", &router.Job{Kind: router.KindDelegate, Objective: "compute", Input: router.NewStringInput("40 - 2")}, "", nil,
			map[string]any{"expression": "40 - 2", "value": int64(38)}},
		{"delegation counts words", &router.Job{Kind: router.KindDelegate, Objective: "summarize the report"}, "", nil,
			map[string]any{"words": 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := honest().Work(context.Background(), tt.job)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verdict != tt.verdict || !cmp.Equal(res.Reasons, tt.reasons) || !cmp.Equal(res.Output, tt.output) {
				t.Errorf("got %s %q output %v, want %s %q output %v", res.Verdict, res.Reasons, res.Output,
					tt.verdict, tt.reasons, tt.output)
			}
		})
	}
}

func TestSometimesWrong(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	job := &router.Job{Kind: router.KindValidate, Claim: &router.Claim{Output: json.RawMessage(`"1 + 1 = 2"`)}}
	if res, _ := sometimesWrong(honest(), 1, 1).Work(ctx, job); res.Verdict != router.VerdictInvalid {
		t.Errorf("always wrong: %s, want INVALID", res.Verdict)
	}
	del := &router.Job{Kind: router.KindDelegate, Objective: "2 + 2"}
	if res, _ := sometimesWrong(honest(), 1, 1).Work(ctx, del); !cmp.Equal(res.Output, map[string]any{"expression": "2 + 2", "value": int64(5)}) {
		t.Errorf("always wrong delegation: %v, want value 5", res.Output)
	}
	if res, _ := sometimesWrong(honest(), 0, 1).Work(ctx, job); res.Verdict != router.VerdictValid {
		t.Errorf("never wrong: %s, want VALID", res.Verdict)
	}

	// The same seed gives the same sequence of wrong calls.
	sequence := func() []router.Verdict {
		w := sometimesWrong(honest(), 1.0/3, 5)
		var vs []router.Verdict
		for range 30 {
			res, _ := w.Work(ctx, job)
			vs = append(vs, res.Verdict)
		}
		return vs
	}
	a, b := sequence(), sequence()
	wrong := 0
	for _, v := range a {
		if v == router.VerdictInvalid {
			wrong++
		}
	}
	if !cmp.Equal(a, b) || wrong == 0 || wrong == len(a) {
		t.Errorf("sequences %v and %v: want equal, with some but not all wrong", a, b)
	}
}

func TestSlow_cancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop")
	cancel(stop)
	if _, err := slow(honest(), time.Hour).Work(ctx, &router.Job{Kind: router.KindFactcheck}); !errors.Is(err, stop) {
		t.Errorf("cancelled slow worker: %v, want the context's cause", err)
	}
}
