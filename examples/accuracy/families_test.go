package main

import (
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func TestFamilies_drawPanels(t *testing.T) {
	t.Parallel()
	eligible := map[string][]string{
		"lookalike":   slices.Concat(lookAlikes, emotionGood, emotionRest),
		"judgebench":  append([]string{judgeBenchStrong}, judgeBenchWeak...),
		"mmlu-strong": mmluStrong, "mmlu-mid": mmluMid, "gsm8k-small": gsmSmall, "gsm8k-mid": gsmMid,
	}
	for _, j := range append([]string{llmbarStrong}, llmbarWeak...) {
		for _, s := range llmbarStrategies {
			eligible["llmbar"] = append(eligible["llmbar"], j+"|"+s)
		}
	}
	for _, f := range families {
		t.Run(f.name, func(t *testing.T) {
			panels := map[[panelSize]string]bool{}
			for seed := range uint64(4) {
				for p := range 3 {
					ms := f.draw(seed, p)
					if ms != f.draw(seed, p) {
						t.Fatalf("seed %d panel %d: two draws differ", seed, p)
					}
					if len(slices.Compact(slices.Sorted(slices.Values(ms[:])))) != panelSize {
						t.Errorf("seed %d panel %d: %v: a model twice", seed, p, ms)
					}
					for _, m := range ms {
						if !slices.Contains(eligible[f.name], m) {
							t.Errorf("seed %d panel %d: %q is not eligible", seed, p, m)
						}
					}
					checkShape(t, f.name, p, ms)
					sorted := ms
					slices.Sort(sorted[:])
					panels[sorted] = true
				}
			}
			if len(panels) < 4 {
				t.Errorf("12 draws gave %d panels, want at least 4", len(panels))
			}
		})
	}
}

// checkShape checks what a family promises of each panel.
func checkShape(t *testing.T, fam string, p int, ms [panelSize]string) {
	t.Helper()
	count := func(pred func(string) bool) int {
		n := 0
		for _, m := range ms {
			if pred(m) {
				n++
			}
		}
		return n
	}
	in := func(pool ...string) func(string) bool { return func(m string) bool { return slices.Contains(pool, m) } }
	switch fam {
	case "lookalike":
		if count(in(lookAlikes...)) != 2 || count(in(emotionGood...)) != 1+p%2 {
			t.Errorf("panel %d: %v: want both look-alikes and %d good models", p, ms, 1+p%2)
		}
	case "llmbar":
		judges := map[string]bool{}
		for _, m := range ms {
			judges[strings.Split(m, "|")[0]] = true
		}
		if count(func(m string) bool { return strings.HasPrefix(m, llmbarStrong+"|") }) != 1 || len(judges) != panelSize {
			t.Errorf("panel %d: %v: want one GPT-4 and four other judges", p, ms)
		}
	case "judgebench":
		if count(in(judgeBenchStrong)) != 1 {
			t.Errorf("panel %d: %v: want o1-mini", p, ms)
		}
	}
}

// TestLookAlikes checks, on the cut rows, that the look-alikes give the
// same answer on at least 90% of the texts, and that no two other models
// do.
func TestLookAlikes(t *testing.T) {
	t.Parallel()
	answers := map[string]map[string]int{}
	for _, r := range readRows(t, filepath.Join(cut, "uncertainty-bench-emotion", "emotion_logits_long.csv")) {
		var logits [len(emotionOptions)]float64
		for k, o := range emotionOptions {
			logits[k], _ = strconv.ParseFloat(r["logit_"+o], 64)
		}
		if answers[r["model"]] == nil {
			answers[r["model"]] = map[string]int{}
		}
		answers[r["model"]][r["id"]] = argmax(softmax(logits))
	}
	same := func(a, b string) float64 {
		n := 0
		for id, x := range answers[a] {
			if answers[b][id] == x {
				n++
			}
		}
		return float64(n) / float64(len(answers[a]))
	}
	models := slices.Sorted(func(yield func(string) bool) {
		for m := range answers {
			if !yield(m) {
				return
			}
		}
	})
	for i, a := range models {
		for _, b := range models[i+1:] {
			pair := slices.Contains(lookAlikes, a) && slices.Contains(lookAlikes, b)
			if s := same(a, b); pair != (s >= 0.9) {
				t.Errorf("%s and %s give the same answer on %.0f%% of the texts; look-alikes: %v", a, b, 100*s, pair)
			}
		}
	}
}
