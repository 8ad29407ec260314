package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strings"
	"sync"

	"github.com/vouchkit/vouch/router"
)

// A fact is what an answer states: who won which prize in which year. The
// workload's questions ask "who won the <year> Nobel Prize in <field>?".
type fact struct {
	Laureate string
	Year     int
	Field    string
}

var (
	laureates = []string{"Marie Curie", "Ernest Rutherford", "Niels Bohr", "Max Planck", "Lise Meitner", "Enrico Fermi",
		"Dorothy Hodgkin", "Linus Pauling", "Barbara McClintock", "Paul Dirac", "Irene Joliot-Curie", "Wilhelm Rontgen"}
	fields = []string{"Physics", "Chemistry", "Medicine", "Literature", "Peace", "Economics"}
)

// wordings say a fact in other words: the same fact, eight sentences.
var wordings = []func(f fact) string{
	func(f fact) string {
		return fmt.Sprintf("%s won the %d Nobel Prize in %s.", f.Laureate, f.Year, f.Field)
	},
	func(f fact) string {
		return fmt.Sprintf("In %d the Nobel Prize in %s went to %s.", f.Year, f.Field, f.Laureate)
	},
	func(f fact) string {
		return fmt.Sprintf("The %d %s Nobel was awarded to %s.", f.Year, f.Field, f.Laureate)
	},
	func(f fact) string {
		return fmt.Sprintf("%s: she or he received the %s prize of %d.", f.Laureate, f.Field, f.Year)
	},
	func(f fact) string {
		return fmt.Sprintf("It was %s who took the Nobel in %s in %d.", f.Laureate, f.Field, f.Year)
	},
	func(f fact) string { return fmt.Sprintf("%s, %d, Nobel Prize in %s.", f.Laureate, f.Year, f.Field) },
	func(f fact) string {
		return fmt.Sprintf("The answer is %s, laureate of the %d Nobel Prize in %s.", f.Laureate, f.Year, f.Field)
	},
	func(f fact) string {
		return fmt.Sprintf("That year (%d) the %s prize was %s's.", f.Year, f.Field, f.Laureate)
	},
}

// workload is a seeded set of questions and the answers and judgements of
// a simulated panel. Every draw is a hash of the seed and of what is
// drawn (question, session, claim), so that the figures do not depend on
// the order in which concurrent replicas run.
type workload struct {
	seed      uint64
	questions []fact
	wrongRate []float64 // per session: the chance its answer changes one fact
	judgeErr  float64   // the chance a judge's verdict is wrong

	mu    sync.Mutex
	texts map[string]answer // every answer text given, with what it states
}

// answer is what a text states, and how it is worded.
type answer struct {
	question int
	fact     fact
	wording  int
}

func newWorkload(seed uint64, calls int, wrongRate []float64, judgeErr float64) *workload {
	w := &workload{seed: seed, wrongRate: wrongRate, judgeErr: judgeErr, texts: map[string]answer{}}
	r := w.rng("questions")
	for range calls {
		w.questions = append(w.questions, fact{
			Laureate: laureates[r.IntN(len(laureates))], Year: 1901 + r.IntN(90), Field: fields[r.IntN(len(fields))],
		})
	}
	return w
}

// rng is a generator seeded by the workload's seed and parts.
func (w *workload) rng(parts ...any) *rand.Rand {
	h := fnv.New64a()
	binary.Write(h, binary.LittleEndian, w.seed)
	fmt.Fprint(h, parts...)
	s := h.Sum64()
	return rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
}

// question is the input of question q.
func question(q int, f fact) string {
	return fmt.Sprintf("Question %d: who won the %d Nobel Prize in %s?", q, f.Year, f.Field)
}

// questionOf reads the question's number back from its input.
func questionOf(input string) (int, bool) {
	var q int
	_, err := fmt.Sscanf(input, "Question %d:", &q)
	return q, err == nil
}

// answerOf is session s's answer to question q: the fact in one of the
// wordings, or, at the session's rate, the fact with one part changed
// (another laureate, another year, or another field).
func (w *workload) answerOf(q int, s router.SessionID) (string, answer) {
	r := w.rng("answer", q, s)
	f := w.questions[q]
	if r.Float64() < w.wrongRate[int(s)-1] {
		switch r.IntN(3) {
		case 0:
			f.Laureate = other(r, laureates, f.Laureate)
		case 1:
			f.Year += 1 + r.IntN(10)
		default:
			f.Field = other(r, fields, f.Field)
		}
	}
	a := answer{question: q, fact: f, wording: r.IntN(len(wordings))}
	text := wordings[a.wording](f)
	w.mu.Lock()
	w.texts[text] = a
	w.mu.Unlock()
	return text, a
}

func other(r *rand.Rand, from []string, not string) string {
	for {
		if v := from[r.IntN(len(from))]; v != not {
			return v
		}
	}
}

// lookup returns what text states.
func (w *workload) lookup(text string) (answer, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	a, ok := w.texts[text]
	return a, ok
}

// worker is session s: it answers delegations with answerOf and judges a
// claimed answer by its facts, wrong at the rate judgeErr.
func (w *workload) worker(s router.SessionID) router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		input, _ := job.Input.String()
		if job.Kind == router.KindValidate {
			input, _ = job.TaskInput.String()
		}
		q, ok := questionOf(input)
		if !ok || q < 0 || q >= len(w.questions) {
			return nil, fmt.Errorf("freetext: unknown question %q", input)
		}
		if job.Kind == router.KindDelegate {
			text, _ := w.answerOf(q, s)
			return &router.Result{Output: text, Confidence: 0.9}, nil
		}
		var claimed string
		if job.Claim == nil || json.Unmarshal(job.Claim.Output, &claimed) != nil {
			return nil, fmt.Errorf("freetext: the claim is not a string")
		}
		a, known := w.lookup(claimed)
		right := known && a.fact == w.questions[q]
		if w.rng("judge", q, s, claimed).Float64() < w.judgeErr {
			right = !right
		}
		v := router.VerdictInvalid
		if right {
			v = router.VerdictValid
		}
		return &router.Result{Verdict: v, Confidence: 0.9, Reasons: []string{"checked the laureate, the year and the field"}}, nil
	})
}

// profile is a stand-in embedding model: an answer's vector is the sum of
// a direction for its question's topic, one for each part of the fact it
// states (laureate, year, field), and one for its wording, each a random
// unit vector of dim dimensions weighted as the profile says.
type profile struct {
	name                   string
	topic, part, wordingWt float64
}

// The profiles measured. "separating" weighs each fact as much as the
// topic: paraphrases are about 0.97 similar and a changed fact about 0.73.
// "topic-heavy" is nearer a general-purpose embedding model, where the
// topic dominates and a changed fact moves the vector little: paraphrases
// about 0.98, a changed fact about 0.93.
var profiles = []profile{
	{name: "separating", topic: 1, part: 1, wordingWt: 0.35},
	{name: "topic-heavy", topic: 2, part: 0.5, wordingWt: 0.25},
}

const dim = 256

// embed returns the profile's vector of text, which the workload gave.
func (w *workload) embed(p profile, text string) []float64 {
	a, ok := w.lookup(text)
	if !ok {
		return w.direction("unknown", text) // far from every answer
	}
	v := make([]float64, dim)
	add := func(weight float64, u []float64) {
		for i := range v {
			v[i] += weight * u[i]
		}
	}
	add(p.topic, w.direction("topic", a.question))
	add(p.part, w.direction("laureate", a.fact.Laureate))
	add(p.part, w.direction("year", a.fact.Year))
	add(p.part, w.direction("field", a.fact.Field))
	add(p.wordingWt, w.direction("wording", a.wording, a.question))
	return v
}

// direction is a seeded random unit vector named by parts.
func (w *workload) direction(parts ...any) []float64 {
	r := w.rng(append([]any{"direction"}, parts...)...)
	v := make([]float64, dim)
	var n float64
	for i := range v {
		v[i] = r.NormFloat64()
		n += v[i] * v[i]
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] /= n
	}
	return v
}

// statesTruth reports whether a result (a JSON string) states question
// q's fact; known is false when the result is not an answer of the panel.
func (w *workload) statesTruth(q int, result json.RawMessage) (right, known bool) {
	var s string
	if json.Unmarshal(result, &s) != nil {
		return false, false
	}
	a, ok := w.lookup(strings.TrimSpace(s))
	return ok && a.fact == w.questions[q], ok
}
