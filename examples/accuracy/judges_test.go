package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

func TestLoadLLMBar(t *testing.T) {
	t.Parallel()
	spec := &panelSpec{name: "llmbar", kind: llmbar, models: families[1].draw(1, 0)}
	tb, err := loadTable(cut, spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	rows := readRows(t, filepath.Join(cut, "llmbar", "llmbar_judgments.csv"))
	if tb.len() != 2*len(rows) {
		t.Fatalf("%d claims from %d items, want two per item", tb.len(), len(rows))
	}
	byID := map[string]map[string]string{}
	for _, r := range rows {
		byID[r["subset"]+"/"+r["idx"]] = r
	}
	claims := map[string]int{}
	for i := range tb.len() {
		id := tb.rows[i]
		order := id[strings.LastIndex(id, "/")+1:]
		r := byID[strings.TrimSuffix(id, "/"+order)]
		if r == nil || (order != "orig" && order != "swap") {
			t.Fatalf("claim %d: row %q is no item in an order", i, id)
		}
		claims[tb.claimed[i]]++
		if want := verdictOf(tb.claimed[i] == r["gold"]); tb.truth(i) != want {
			t.Errorf("%s: truth %s, want %s", id, tb.truth(i), want)
		}
		for s, m := range spec.models {
			a := tb.answer(i, router.SessionID(s+1))
			want := answer{verdict: verdictOf(r[m+"|"+order] == tb.claimed[i]), confidence: noConfidence, latency: a.latency}
			if diff := cmp.Diff(want, a, cmp.AllowUnexported(answer{})); diff != "" {
				t.Errorf("%s, %s: (-want +got)\n%s", id, m, diff)
			}
		}
	}
	if claims["1"] < tb.len()/4 || claims["2"] < tb.len()/4 {
		t.Errorf("claims %v: want both outputs claimed about half the time", claims)
	}
}

func TestLoadJudgeBench(t *testing.T) {
	t.Parallel()
	spec := &panelSpec{name: "judgebench", kind: judgeBench, models: families[2].draw(1, 0)}
	tb, err := loadTable(cut, spec, 1)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]map[string]string{}
	for _, r := range readRows(t, filepath.Join(cut, "judgebench", "judgebench_gpt4o_pairs.csv")) {
		byID[r["pair_id"]] = r
	}
	if tb.len() != 2*len(byID) {
		t.Fatalf("%d claims from %d pairs, want two per pair", tb.len(), len(byID))
	}
	for i := range tb.len() {
		pair, order, _ := strings.Cut(tb.rows[i], "/")
		r := byID[pair]
		trial := map[string]string{"orig": "trial1", "swap": "trial2"}[order]
		if want := verdictOf(tb.claimed[i] == r["label"]); tb.truth(i) != want {
			t.Errorf("%s: truth %s, want %s", tb.rows[i], tb.truth(i), want)
		}
		for s, m := range spec.models {
			a := tb.answer(i, router.SessionID(s+1))
			verdict := r[m+"|"+trial+"_decision"]
			if trial == "trial2" {
				verdict = judgeBenchFlip[verdict]
			}
			want := answer{verdict: verdictOf(verdict == tb.claimed[i]), confidence: noConfidence, latency: a.latency}
			if sc, ok := r[m+"|"+trial+"_scores"]; ok {
				gap, _ := rewardGap(sc)
				want.confidence = 1 / (1 + math.Exp(-math.Abs(gap)))
			}
			if diff := cmp.Diff(want, a, cmp.AllowUnexported(answer{})); diff != "" {
				t.Errorf("%s, %s: (-want +got)\n%s", tb.rows[i], m, diff)
			}
		}
	}
}

func TestLoadJudges_badInput(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, file, content, want string
		kind                      dataKind
		models                    [panelSize]string
	}{
		{"LLMBar gold", "llmbar/llmbar_judgments.csv", "subset,idx,gold,a|orig,a|swap,b|orig,b|swap,c|orig,c|swap,d|orig,d|swap,e|orig,e|swap\nLLMBar/Natural,0,3,1,1,1,1,1,1,1,1,1,1\n",
			"line 2: gold is \"3\"", llmbar, [panelSize]string{"a", "b", "c", "d", "e"}},
		{"LLMBar judge absent", "llmbar/llmbar_judgments.csv", "subset,idx,gold,a|orig\n", `no column "b|orig"`, llmbar, [panelSize]string{"a", "b", "c", "d", "e"}},
		{"JudgeBench label", "judgebench/judgebench_gpt4o_pairs.csv",
			"pair_id,label,a|trial1_decision,a|trial2_decision,b|trial1_decision,b|trial2_decision,c|trial1_decision,c|trial2_decision,d|trial1_decision,d|trial2_decision,e|trial1_decision,e|trial2_decision\np,A=B,A>B,A>B,A>B,A>B,A>B,A>B,A>B,A>B,A>B,A>B\n",
			"line 2: label is \"A=B\"", judgeBench, [panelSize]string{"a", "b", "c", "d", "e"}},
		{"JudgeBench verdict", "judgebench/judgebench_gpt4o_pairs.csv",
			"pair_id,label,a|trial1_decision,a|trial2_decision,b|trial1_decision,b|trial2_decision,c|trial1_decision,c|trial2_decision,d|trial1_decision,d|trial2_decision,e|trial1_decision,e|trial2_decision\np,A>B,A>B,A>>B,A>B,A>B,A>B,A>B,A>B,A>B,A>B,A>B\n",
			"line 2: a trial2 verdict is \"A>>B\"", judgeBench, [panelSize]string{"a", "b", "c", "d", "e"}},
		{"JudgeBench scores", "judgebench/judgebench_gpt4o_pairs.csv",
			"pair_id,label,a|trial1_decision,a|trial1_scores,a|trial2_decision,a|trial2_scores,b|trial1_decision,b|trial2_decision,c|trial1_decision,c|trial2_decision,d|trial1_decision,d|trial2_decision,e|trial1_decision,e|trial2_decision\np,A>B,A>B,1;x,B>A,1;2,A>B,A>B,A>B,A>B,A>B,A>B,A>B,A>B\n",
			"line 2: a trial1 scores: want two finite rewards a;b, got \"1;x\"", judgeBench, [panelSize]string{"a", "b", "c", "d", "e"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, tt.file), tt.content)
			_, err := loadTable(dir, &panelSpec{name: "w", kind: tt.kind, models: tt.models}, 1)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// writeFile writes s to path, making its folder.
func writeFile(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}
