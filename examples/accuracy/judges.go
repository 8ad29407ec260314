package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// The pairwise-judging worlds frame a judge's verdict on two responses
// as the job vouch does: a claim that one response is the better one
// (each call's claim drawn by the seed, so that about half the claims
// are valid) is validated by a panel of five judges; a judge votes VALID
// when it prefers the claimed response and INVALID when it prefers the
// other or calls a tie. Each item is judged twice, the responses in
// either order, as the data holds both: the two calls share the item's
// truth and not always the judges' verdicts.

// orders are the two presentations of a pair, in the order of the calls.
var orders = [2]string{"orig", "swap"}

// loadLLMBar reads LLMBar's verdicts (llmbar/llmbar_judgments.csv): a
// row is an item, gold its better output (1 or 2), and the column
// judge|strategy|order the output the judge preferred with the outputs
// in that order, already numbered as in the original one. Only LLMBar's
// own items (natural and adversarial) are read: the other subsets lack
// most judges. A verdict that is neither 1 nor 2 (the judge answered
// nothing usable) confirms no claim. LLMBar's judges state no
// confidence: a vote states noConfidence.
func loadLLMBar(path string, spec *panelSpec, seed uint64) (*table, error) {
	r, cols, f, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	meta, err := columns(path, cols, "subset", "idx", "gold")
	if err != nil {
		return nil, err
	}
	var panel [len(orders)][]int
	for o, order := range orders {
		names := make([]string, panelSize)
		for s, m := range spec.models {
			names[s] = m + "|" + order
		}
		if panel[o], err = columns(path, cols, names...); err != nil {
			return nil, err
		}
	}
	t := &table{spec: spec}
	err = eachRecord(r, path, func(line int, rec []string) error {
		if !strings.HasPrefix(rec[meta[0]], "LLMBar/") {
			return nil
		}
		gold := rec[meta[2]]
		if gold != "1" && gold != "2" {
			return fmt.Errorf("%s line %d: gold is %q, want 1 or 2", path, line, gold)
		}
		for o, order := range orders {
			id := rec[meta[0]] + "/" + rec[meta[1]] + "/" + order
			claimed := strconv.Itoa(1 + pick(seed, streamSeller, id, 2))
			var as [panelSize]answer
			for s, j := range panel[o] {
				as[s] = answer{verdict: verdictOf(rec[j] == claimed), confidence: noConfidence}
			}
			t.add(id, claimed, verdictOf(claimed == gold), as)
		}
		return nil
	})
	return t, err
}

// judgeBenchFlip maps a verdict given with the responses swapped back to
// the original positions.
var judgeBenchFlip = map[string]string{"A>B": "B>A", "B>A": "A>B", "A=B": "A=B"}

// loadJudgeBench reads JudgeBench's verdicts
// (judgebench/judgebench_gpt4o_pairs.csv): a row is a pair of responses,
// label its gold (A>B or B>A), and judge|trialN_decision the judge's
// verdict, trial1 in the original order and trial2 with the responses
// swapped (its verdict in the swapped positions). A reward model's vote
// states the probability its two rewards imply that its preferred
// response is the better one, the logistic of their gap (judge|trialN_scores,
// the rewards of the responses as presented); o1-mini states none
// (noConfidence).
func loadJudgeBench(path string, spec *panelSpec, seed uint64) (*table, error) {
	r, cols, f, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	meta, err := columns(path, cols, "pair_id", "label")
	if err != nil {
		return nil, err
	}
	var decisions, scores [len(orders)][panelSize]int
	for o := range orders {
		for s, m := range spec.models {
			trial := fmt.Sprintf("%s|trial%d_", m, o+1)
			j, err := columns(path, cols, trial+"decision")
			if err != nil {
				return nil, err
			}
			decisions[o][s], scores[o][s] = j[0], -1
			if k, ok := cols[trial+"scores"]; ok {
				scores[o][s] = k
			}
		}
	}
	t := &table{spec: spec}
	err = eachRecord(r, path, func(line int, rec []string) error {
		gold := rec[meta[1]]
		if gold != "A>B" && gold != "B>A" {
			return fmt.Errorf("%s line %d: label is %q, want A>B or B>A", path, line, gold)
		}
		for o, order := range orders {
			id := rec[meta[0]] + "/" + order
			claimed := [2]string{"A>B", "B>A"}[pick(seed, streamSeller, id, 2)]
			var as [panelSize]answer
			for s := range spec.models {
				verdict, ok := rec[decisions[o][s]], true
				if o == 1 {
					verdict, ok = judgeBenchFlip[verdict]
				}
				if !ok {
					return fmt.Errorf("%s line %d: %s trial2 verdict is %q, want A>B, B>A or A=B", path, line, spec.models[s], rec[decisions[o][s]])
				}
				as[s] = answer{verdict: verdictOf(verdict == claimed), confidence: noConfidence}
				if scores[o][s] >= 0 {
					gap, err := rewardGap(rec[scores[o][s]])
					if err != nil {
						return fmt.Errorf("%s line %d: %s trial%d scores: %w", path, line, spec.models[s], o+1, err)
					}
					as[s].confidence = 1 / (1 + math.Exp(-math.Abs(gap)))
				}
			}
			t.add(id, claimed, verdictOf(claimed == gold), as)
		}
		return nil
	})
	return t, err
}

// eachRecord hands each record of r after the header to do, with its
// line number, until the end or the first error.
func eachRecord(r *csv.Reader, path string, do func(line int, rec []string) error) error {
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if err := do(line, rec); err != nil {
			return err
		}
	}
}

// rewardGap reads a reward model's two rewards, "a;b", and returns a − b.
func rewardGap(cell string) (float64, error) {
	a, b, ok := strings.Cut(cell, ";")
	x, errA := strconv.ParseFloat(a, 64)
	y, errB := strconv.ParseFloat(b, 64)
	if !ok || errA != nil || errB != nil || math.IsNaN(x-y) || math.IsInf(x-y, 0) {
		return 0, fmt.Errorf("want two finite rewards a;b, got %q", cell)
	}
	return x - y, nil
}
