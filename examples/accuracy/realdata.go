package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/vouchkit/vouch/router"
)

// The real-data validation workloads frame real answers of language
// models as the job vouch does: validating a claimed result. A seller
// model, drawn for each question from the models outside the panel,
// claims its answer; the panel's five models are the sessions; a session
// votes VALID when its own answer is the claimed one and INVALID
// otherwise; the claim's truth is whether it equals the gold answer. The
// tables are read from the folder the -data flag names (the layout of
// each folder's SOURCE.md) and never copied.

// A panelSpec is a real-data validation workload: which file, which five
// models are the sessions, and its runs target.
type panelSpec struct {
	name, title string
	kind        dataKind
	models      [panelSize]string // the sessions' models, session 1 first
	runsTarget  float64           // adaptive's runs per call, at most
}

// dataKind is the layout of a real-data folder.
type dataKind int

const (
	mmluPro    dataKind = iota // mmlu-pro/mmlu_pro_predictions.csv: one answer letter per model
	emotion                    // uncertainty-bench-emotion/emotion_logits_long.csv: option logits per model
	llmbar                     // llmbar/llmbar_judgments.csv: a pairwise verdict per judge and order
	judgeBench                 // judgebench/judgebench_gpt4o_pairs.csv: a pairwise verdict per judge and order
	gsm8k                      // zeroeval-gsm8k/gsm8k_answers.csv: a number per model (a delegation)
)

// panelSpecs are the real-data validation workloads, in the order they
// are reported. docs/ACCURACY.md says why these panels.
var panelSpecs = []panelSpec{
	{
		name:  "mmlu-strong",
		title: "MMLU-Pro, five strong models of five providers",
		kind:  mmluPro,
		models: [panelSize]string{"gpt-4o-2024-05-13(early-run)", "gemini-1.5-pro-002", "Meta-Llama-3_1-70B-Instruct",
			"DeepSeek-Coder-V2", "Qwen1.5-110B"},
		runsTarget: 2.35,
	},
	{
		name:  "mmlu-open",
		title: "MMLU-Pro, five open mid-size models",
		kind:  mmluPro,
		models: [panelSize]string{"Meta-Llama-3-70B", "Qwen1.5-72B-Chat", "Yi-34B", "Mixtral-8x7B-Instruct-v0.1",
			"c4ai-command-r-v01"},
		runsTarget: 2.65,
	},
	{
		name:       "emotion",
		title:      "emotion classification, five open models with their real option probabilities",
		kind:       emotion,
		models:     [panelSize]string{"Mistral-7B-v0.1", "Qwen-14B", "Qwen-7B", "Llama-2-13b-hf", "deepseek-llm-7b-base"},
		runsTarget: 2.5,
	},
}

// noConfidence is the confidence a session reports when its model states
// none (MMLU-Pro holds answer letters only): a constant, which says
// nothing about which answers are right.
const noConfidence = 0.5

// A table is a real-data workload loaded: its claims in a seeded order,
// each with its truth and the five sessions' answers, and the models the
// sellers were drawn from.
type table struct {
	spec    *panelSpec
	truths  []router.Verdict
	answers [][panelSize]answer
	rows    []string // each claim's row id in the file
	claimed []string // each claim's claimed answer, the seller's
	sellers []string // the models outside the panel
	dropped dropped
}

// dropped counts the rows of a table left out, by reason.
type dropped struct {
	disputed, missing, noSeller int
}

func (t *table) truth(i int) router.Verdict { return t.truths[i] }

func (t *table) answer(i int, s router.SessionID) answer { return t.answers[i][s-1] }

// len returns the number of claims.
func (t *table) len() int { return len(t.truths) }

// loadTable reads the workload of spec from the real-data folder dir,
// with the sellers and the order of the claims drawn from seed.
func loadTable(dir string, spec *panelSpec, seed uint64) (*table, error) {
	var t *table
	var err error
	switch spec.kind {
	case mmluPro:
		t, err = loadMMLUPro(filepath.Join(dir, "mmlu-pro", "mmlu_pro_predictions.csv"), spec, seed)
	case emotion:
		t, err = loadEmotion(filepath.Join(dir, "uncertainty-bench-emotion", "emotion_logits_long.csv"), spec, seed)
	case llmbar:
		t, err = loadLLMBar(filepath.Join(dir, "llmbar", "llmbar_judgments.csv"), spec, seed)
	case judgeBench:
		t, err = loadJudgeBench(filepath.Join(dir, "judgebench", "judgebench_gpt4o_pairs.csv"), spec, seed)
	default:
		err = fmt.Errorf("unknown kind of data %d", spec.kind)
	}
	if err != nil {
		return nil, fmt.Errorf("-data: %s: %w", spec.name, err)
	}
	if t.len() == 0 {
		return nil, fmt.Errorf("-data: %s: no claim left after dropping rows", spec.name)
	}
	t.shuffle(seed)
	return t, nil
}

// readCSV opens a CSV file with a header, and returns its reader and the
// header's columns by name.
func readCSV(path string) (*csv.Reader, map[string]int, io.Closer, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, nil, err
	}
	r := csv.NewReader(f)
	r.ReuseRecord = true
	head, err := r.Read()
	if err != nil {
		f.Close()
		return nil, nil, nil, fmt.Errorf("%s: reading the header: %w", path, err)
	}
	cols := make(map[string]int, len(head))
	for i, h := range head {
		cols[h] = i
	}
	return r, cols, f, nil
}

// columns returns the index of each named column, or an error naming the
// first one absent.
func columns(path string, cols map[string]int, names ...string) ([]int, error) {
	idx := make([]int, len(names))
	for i, n := range names {
		j, ok := cols[n]
		if !ok {
			return nil, fmt.Errorf("%s: no column %q", path, n)
		}
		idx[i] = j
	}
	return idx, nil
}

// mmluMeta are the columns of an MMLU-Pro row that are not a model's.
var mmluMeta = []string{"question_id", "category", "src", "n_options", "gold", "gold_disputed"}

// loadMMLUPro reads MMLU-Pro answers: a row is a question, gold its
// answer letter, and each model's cell the letter it answered, empty
// when its harness parsed no answer, NA when the model never saw the
// question. A row whose gold is disputed, or where a panel model has NA,
// is dropped; an empty cell is a run that found no answer, so its
// session does not confirm the claim and votes INVALID. The seller is
// drawn among the models outside the panel that answered a letter (a row
// with none is dropped).
func loadMMLUPro(path string, spec *panelSpec, seed uint64) (*table, error) {
	r, cols, f, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	meta, err := columns(path, cols, "question_id", "gold", "gold_disputed")
	if err != nil {
		return nil, err
	}
	panel, err := columns(path, cols, spec.models[:]...)
	if err != nil {
		return nil, err
	}
	t := &table{spec: spec}
	var sellers []int // the columns of the models outside the panel
	for name, j := range cols {
		if !slices.Contains(mmluMeta, name) && !slices.Contains(panel, j) {
			sellers = append(sellers, j)
			t.sellers = append(t.sellers, name)
		}
	}
	slices.Sort(sellers)
	slices.Sort(t.sellers)
	if len(sellers) == 0 {
		return nil, fmt.Errorf("%s: no model outside the panel to draw sellers from", path)
	}
	for row := 0; ; row++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if rec[meta[2]] == "1" {
			t.dropped.disputed++
			continue
		}
		if slices.ContainsFunc(panel, func(j int) bool { return rec[j] == "NA" }) {
			t.dropped.missing++
			continue
		}
		var answered []int
		for _, j := range sellers {
			if rec[j] != "" && rec[j] != "NA" {
				answered = append(answered, j)
			}
		}
		if len(answered) == 0 {
			t.dropped.noSeller++
			continue
		}
		id := rec[meta[0]]
		claimed := rec[answered[pick(seed, streamSeller, id, len(answered))]]
		truth := verdictOf(claimed == rec[meta[1]])
		var as [panelSize]answer
		for s, j := range panel {
			as[s] = answer{verdict: verdictOf(rec[j] == claimed), confidence: noConfidence}
		}
		t.add(id, claimed, truth, as)
	}
	return t, nil
}

// emotionOptions are the options of the emotion set, in the order of its
// logit columns.
var emotionOptions = [...]string{"A", "B", "C", "D", "E", "F"}

// loadEmotion reads the emotion set's option logits: a row is one model's
// next-token logits over the options A to F on one text. A model's
// answer is its most probable option (softmax of the logits), the
// seller's is the claim, and a session's vote carries the probability
// its model gives the claimed option: p when it votes VALID (its answer
// is the claimed option), 1 − p when it votes INVALID. A text a panel
// model has no row for is dropped; the seller is drawn among the models
// outside the panel that have a row for the text.
func loadEmotion(path string, spec *panelSpec, seed uint64) (*table, error) {
	r, cols, f, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	names := []string{"model", "id", "gold"}
	for _, o := range emotionOptions {
		names = append(names, "logit_"+o)
	}
	idx, err := columns(path, cols, names...)
	if err != nil {
		return nil, err
	}
	type text struct {
		gold  string
		probs map[string][len(emotionOptions)]float64 // by model
	}
	texts := map[string]*text{}
	var order []string
	models := map[string]bool{}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		var logits [len(emotionOptions)]float64
		for k := range logits {
			if logits[k], err = strconv.ParseFloat(rec[idx[3+k]], 64); err != nil || math.IsNaN(logits[k]) || math.IsInf(logits[k], 0) {
				return nil, fmt.Errorf("%s line %d: %s is not a finite number: %q", path, line, names[3+k], rec[idx[3+k]])
			}
		}
		id := rec[idx[1]]
		tx := texts[id]
		if tx == nil {
			tx = &text{gold: rec[idx[2]], probs: map[string][len(emotionOptions)]float64{}}
			texts[id] = tx
			order = append(order, id)
		}
		tx.probs[rec[idx[0]]] = softmax(logits)
		models[rec[idx[0]]] = true
	}
	t := &table{spec: spec}
	for _, m := range spec.models {
		if !models[m] {
			return nil, fmt.Errorf("%s: no row of model %q", path, m)
		}
	}
	for m := range models {
		if !slices.Contains(spec.models[:], m) {
			t.sellers = append(t.sellers, m)
		}
	}
	slices.Sort(t.sellers)
	if len(t.sellers) == 0 {
		return nil, fmt.Errorf("%s: no model outside the panel to draw sellers from", path)
	}
	for _, id := range order {
		tx := texts[id]
		if slices.ContainsFunc(spec.models[:], func(m string) bool { _, ok := tx.probs[m]; return !ok }) {
			t.dropped.missing++
			continue
		}
		var answered []string
		for _, m := range t.sellers {
			if _, ok := tx.probs[m]; ok {
				answered = append(answered, m)
			}
		}
		if len(answered) == 0 {
			t.dropped.noSeller++
			continue
		}
		claimed := argmax(tx.probs[answered[pick(seed, streamSeller, id, len(answered))]])
		truth := verdictOf(emotionOptions[claimed] == tx.gold)
		var as [panelSize]answer
		for s, m := range spec.models {
			p := tx.probs[m]
			as[s] = answer{verdict: verdictOf(argmax(p) == claimed), confidence: p[claimed]}
			if as[s].verdict == router.VerdictInvalid {
				as[s].confidence = 1 - p[claimed]
			}
		}
		t.add(id, emotionOptions[claimed], truth, as)
	}
	return t, nil
}

// add appends a claim.
func (t *table) add(row, claimed string, truth router.Verdict, as [panelSize]answer) {
	t.rows = append(t.rows, row)
	t.claimed = append(t.claimed, claimed)
	t.truths = append(t.truths, truth)
	t.answers = append(t.answers, as)
}

// truncate keeps the first n claims, all when n is 0.
func (t *table) truncate(n int) {
	if n > 0 && n < t.len() {
		t.truths, t.answers, t.rows, t.claimed = t.truths[:n], t.answers[:n], t.rows[:n], t.claimed[:n]
	}
}

// shuffle puts the claims in an order drawn from seed, a stream of mixed
// questions rather than the file's order (MMLU-Pro's is by subject), and
// draws each answer's latency, which orders the replicas of a step.
func (t *table) shuffle(seed uint64) {
	keys := make([]float64, t.len())
	for i := range keys {
		keys[i] = uniform(seed, streamOrder, hashString(t.rows[i]))
	}
	perm := sortedBy(keys)
	truths, answers, rows, claimed := make([]router.Verdict, len(perm)), make([][panelSize]answer, len(perm)), make([]string, len(perm)), make([]string, len(perm))
	for i, j := range perm {
		truths[i], answers[i], rows[i], claimed[i] = t.truths[j], t.answers[j], t.rows[j], t.claimed[j]
		for s := range answers[i] {
			answers[i][s].latency = uniform(seed, streamLatency, hashString(rows[i]), uint64(s+1))
		}
	}
	t.truths, t.answers, t.rows, t.claimed = truths, answers, rows, claimed
}

// pick returns a number in [0, n) drawn from the keys.
func pick(seed, stream uint64, id string, n int) int {
	return min(int(uniform(seed, stream, hashString(id))*float64(n)), n-1)
}

// hashString folds s into a key for uniform (FNV-1a).
func hashString(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func verdictOf(valid bool) router.Verdict {
	if valid {
		return router.VerdictValid
	}
	return router.VerdictInvalid
}

// softmax returns the probabilities of logits.
func softmax(logits [len(emotionOptions)]float64) [len(emotionOptions)]float64 {
	m := slices.Max(logits[:])
	var p [len(emotionOptions)]float64
	var sum float64
	for k, l := range logits {
		p[k] = math.Exp(l - m)
		sum += p[k]
	}
	for k := range p {
		p[k] /= sum
	}
	return p
}

// argmax returns the index of the largest probability, the first on a tie.
func argmax(p [len(emotionOptions)]float64) int {
	best := 0
	for k := range p {
		if p[k] > p[best] {
			best = k
		}
	}
	return best
}
