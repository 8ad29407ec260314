package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/router"
)

// The demo workers know one thing well: integer arithmetic. They judge a
// claim or statement by the equations written in it ("17 * 3 = 51"), and
// carry out a delegation by computing the first expression written in it
// ("what is 17 * 3?"). Everything is decided by the text alone, so every
// honest worker gives the same answer to the same job.

// equation matches "A op B = C" with integers of up to nine digits.
var equation = regexp.MustCompile(`(-?\d{1,9})\s*([-+*/×])\s*(-?\d{1,9})\s*=\s*(-?\d{1,12})`)

// expression matches "A op B".
var expression = regexp.MustCompile(`(-?\d{1,9})\s*([-+*/×])\s*(-?\d{1,9})`)

// honest is the worker of the honest sessions: it applies the demo rules
// (see README.md) to the job's text.
func honest() router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		switch job.Kind {
		case router.KindValidate:
			return judge(claimText(job), router.VerdictValid, router.VerdictInvalid, router.VerdictNeedsSpec), nil
		case router.KindFactcheck:
			return judge(job.Statement, router.VerdictTrue, router.VerdictFalse, router.VerdictFalse), nil
		default:
			return compute(job), nil
		}
	})
}

// claimText returns the claimed output as text: a JSON string as its
// value, any other JSON value as written.
func claimText(job *router.Job) string {
	if job.Claim == nil {
		return ""
	}
	var s string
	if json.Unmarshal(job.Claim.Output, &s) == nil {
		return s
	}
	return string(job.Claim.Output)
}

// judge checks every equation in text: all true gives yes, any false gives
// no; a text without an equation gives none, with a lower confidence.
func judge(text string, yes, no, none router.Verdict) *router.Result {
	found := equation.FindAllStringSubmatch(text, -1)
	if len(found) == 0 {
		return &router.Result{Verdict: none, Confidence: 0.5,
			Reasons: []string{"no equation to check: the demo workers check integer arithmetic such as 17 * 3 = 51"}}
	}
	res := &router.Result{Verdict: yes, Confidence: 0.95}
	for _, m := range found {
		want, _ := strconv.ParseInt(m[4], 10, 64)
		got, ok := apply(m[1], m[2], m[3])
		switch {
		case !ok:
			res.Verdict = no
			res.Reasons = append(res.Reasons, fmt.Sprintf("%s %s %s is undefined", m[1], m[2], m[3]))
		case got != want:
			res.Verdict = no
			res.Reasons = append(res.Reasons, fmt.Sprintf("%s %s %s is %d, not %d", m[1], m[2], m[3], got, want))
		default:
			res.Reasons = append(res.Reasons, fmt.Sprintf("%s %s %s = %d holds", m[1], m[2], m[3], want))
		}
	}
	return res
}

// compute answers a delegation: the value of the first expression in the
// objective or a string input, or else the word count of the text.
func compute(job *router.Job) *router.Result {
	text := job.Objective
	if s, ok := job.Input.String(); ok {
		text += "\n" + s
	}
	res := &router.Result{Confidence: 0.95, Model: "demo-arithmetic", Tools: []string{"calculator"}}
	if m := expression.FindStringSubmatch(text); m != nil {
		if v, ok := apply(m[1], m[2], m[3]); ok {
			res.Output = map[string]any{"expression": m[0], "value": v}
			res.Steps = []router.Step{{Description: "computed " + m[0], Tool: "calculator"}}
			return res
		}
	}
	res.Output = map[string]any{"words": len(strings.Fields(text))}
	res.Steps = []router.Step{{Description: "found no expression; counted the words"}}
	res.Tools = nil
	return res
}

// apply computes a op b; ok is false for a division by zero or with a
// remainder.
func apply(a, op, b string) (v int64, ok bool) {
	x, _ := strconv.ParseInt(a, 10, 64)
	y, _ := strconv.ParseInt(b, 10, 64)
	switch op {
	case "+":
		return x + y, true
	case "-":
		return x - y, true
	case "*", "×":
		return x * y, true
	}
	if y == 0 || x%y != 0 {
		return 0, false
	}
	return x / y, true
}

// slow returns w delayed by d, or until the job's context ends.
func slow(w router.Worker, d time.Duration) router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return w.Work(ctx, job)
		case <-ctx.Done():
			return nil, context.Cause(ctx)
		}
	})
}

// sometimesWrong returns w, except that a share rate of its calls, chosen
// by a pseudo-random sequence fixed by seed, come back wrong: verdicts
// flip (VALID and INVALID, TRUE and FALSE; NEEDS_SPEC becomes VALID) and
// computed values are off by one. The n-th call after start is wrong or
// not whatever the time.
func sometimesWrong(w router.Worker, rate float64, seed uint64) router.Worker {
	var mu sync.Mutex
	rnd := rand.New(rand.NewPCG(seed, seed))
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		mu.Lock()
		wrong := rnd.Float64() < rate
		mu.Unlock()
		res, err := w.Work(ctx, job)
		if err != nil || !wrong {
			return res, err
		}
		r := *res
		switch r.Verdict {
		case router.VerdictValid:
			r.Verdict = router.VerdictInvalid
		case router.VerdictInvalid, router.VerdictNeedsSpec:
			r.Verdict = router.VerdictValid
		case router.VerdictTrue:
			r.Verdict = router.VerdictFalse
		case router.VerdictFalse:
			r.Verdict = router.VerdictTrue
		}
		if out, ok := r.Output.(map[string]any); ok {
			if v, ok := out["value"].(int64); ok {
				r.Output = map[string]any{"expression": out["expression"], "value": v + 1}
			}
		}
		if r.Verdict != "" {
			r.Reasons = []string{fmt.Sprintf("judged %s", r.Verdict)}
		}
		return &r, nil
	})
}

// demoSessions returns sessions 1 to 6, serving every tier, in two worker
// pools: a (1, 3, 5) and b (2, 4, 6). Session 2 answers after delay and
// session 5 is wrong about one call in three; the others are honest.
func demoSessions(delay time.Duration) []router.Session {
	ss := make([]router.Session, 6)
	for i := range ss {
		id := router.SessionID(i + 1)
		pool := "a"
		if id%2 == 0 {
			pool = "b"
		}
		w := honest()
		switch id {
		case 2:
			w = slow(w, delay)
		case 5:
			w = sometimesWrong(w, 1.0/3, 5)
		}
		ss[i] = router.Session{ID: id, Worker: w, Pool: pool}
	}
	return ss
}
