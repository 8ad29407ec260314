package chatworker_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

func TestWorker_Work_remembersRejectedSchema(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	f.rejectSchema = true
	w := newWorker(t, f, nil)
	for range 2 {
		if _, err := w.Work(t.Context(), validateJob()); err != nil {
			t.Fatalf("Work: %v", err)
		}
	}
	got := f.schemas()
	// The first job learns that the endpoint rejects response_format (it
	// tries without logprobs first); the second does not ask again.
	if diff := cmp.Diff([]bool{true, true, false, false}, got); diff != "" {
		t.Errorf("requests with response_format (-want +got):\n%s", diff)
	}
}

func TestWorker_Work_keepsSchemaAfterUnrelated400(t *testing.T) {
	f := newFake(t, status(400, ""), status(400, ""), status(400, ""), status(400, ""),
		content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	w := newWorker(t, f, nil)
	if _, err := w.Work(t.Context(), validateJob()); err == nil {
		t.Fatal("Work succeeded on a 400, want an error")
	}
	if _, err := w.Work(t.Context(), validateJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	got := f.schemas()
	if diff := cmp.Diff([]bool{true, true, false, false, true}, got); diff != "" {
		t.Errorf("requests with response_format (-want +got):\n%s", diff)
	}
}

func TestWorker_Work_noFallbackOnceSchemaWorked(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`), status(400, ""))
	w := newWorker(t, f, nil)
	if _, err := w.Work(t.Context(), validateJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	var se *chatworker.StatusError
	if _, err := w.Work(t.Context(), validateJob()); !errors.As(err, &se) || se.StatusCode != 400 {
		t.Fatalf("Work error = %v, want a 400 *StatusError", err)
	}
	// The endpoint took response_format once, so a later 400 is about
	// something else and is not asked again without it.
	if n := len(f.reqs()); n != 2 {
		t.Errorf("server saw %d requests, want 2", n)
	}
}

func TestAnswerSchema_order(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	w := newWorker(t, f, nil)
	if _, err := w.Work(t.Context(), validateJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	schema := string(f.reqs()[0].ResponseFormat.JSONSchema.Schema)
	// A grammar-constrained server writes properties in the schema's
	// order: the verdict must come first, the bounded reasons last.
	v, c, r := strings.Index(schema, `"verdict"`), strings.Index(schema, `"confidence"`), strings.Index(schema, `"reasons"`)
	if !(v >= 0 && v < c && c < r) {
		t.Errorf("schema %s: properties not in the order verdict, confidence, reasons", schema)
	}
	var s struct {
		Properties struct {
			Reasons struct {
				MaxItems int `json:"maxItems"`
				Items    struct {
					MaxLength int `json:"maxLength"`
				} `json:"items"`
			} `json:"reasons"`
		} `json:"properties"`
	}
	if err := json.Unmarshal([]byte(schema), &s); err != nil {
		t.Fatal(err)
	}
	if r := s.Properties.Reasons; r.MaxItems == 0 || r.Items.MaxLength == 0 {
		t.Errorf("schema %s: reasons not bounded in count and length", schema)
	}
}

func TestWorker_Work_verdictProbability(t *testing.T) {
	// The fake cuts content into 3-byte tokens, each of probability 0.9:
	// "VALID" spans bytes 12 to 17, so tokens 4 and 5.
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.92,"reasons":[]}`))
	w := newWorker(t, f, nil)
	res, err := w.Work(t.Context(), validateJob())
	if err != nil {
		t.Fatalf("Work: %v", err)
	}
	call := stepCall(t, res)
	if !call.Logprobs || call.VerdictProbability == nil || math.Abs(*call.VerdictProbability-0.81) > 1e-9 {
		t.Errorf("Call = %+v, want logprobs asked and a verdict probability of 0.81", call)
	}
	if res.Confidence != 0.92 {
		t.Errorf("Confidence = %v, want the stated 0.92", res.Confidence)
	}
	if r := f.reqs()[0]; !r.Logprobs || r.TopLogprobs == nil || *r.TopLogprobs != 1 {
		t.Errorf("request logprobs %v, top_logprobs %v: want true, 1", r.Logprobs, r.TopLogprobs)
	}
}

func TestWorker_Work_remembersRejectedLogprobs(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	f.rejectLogprobs = true
	w := newWorker(t, f, nil)
	for range 2 {
		res, err := w.Work(t.Context(), validateJob())
		if err != nil {
			t.Fatalf("Work: %v", err)
		}
		if call := stepCall(t, res); call.Logprobs || call.VerdictProbability != nil || !call.StructuredOutput {
			t.Errorf("Call = %+v, want structured output without logprobs", call)
		}
	}
	var asked []bool
	for _, r := range f.reqs() {
		asked = append(asked, r.Logprobs)
	}
	// The first job learns that the endpoint rejects logprobs, keeping
	// the schema; the second does not ask again.
	if diff := cmp.Diff([]bool{true, false, false}, asked); diff != "" {
		t.Errorf("requests with logprobs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{true, true, true}, f.schemas()); diff != "" {
		t.Errorf("requests with response_format (-want +got):\n%s", diff)
	}
}

func TestWorker_Work_disableLogprobs(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":[]}`))
	w := newWorker(t, f, func(c *chatworker.Config) { c.DisableLogprobs = true })
	if _, err := w.Work(t.Context(), validateJob()); err != nil {
		t.Fatalf("Work: %v", err)
	}
	if f.reqs()[0].Logprobs {
		t.Error("asked for logprobs with DisableLogprobs")
	}
}

func TestWorker_Work_answerNotes(t *testing.T) {
	f := newFake(t, content(`{"verdict":"INVALID","confidence":52,"reasons":["x","x","x`))
	w := newWorker(t, f, nil)
	res, err := w.Work(t.Context(), validateJob())
	if err != nil {
		t.Fatalf("Work: %v", err)
	}
	if res.Verdict != router.VerdictInvalid || res.Confidence != 0 {
		t.Errorf("result %s %v, want INVALID without a confidence", res.Verdict, res.Confidence)
	}
	want := `confidence 52 is outside [0, 1]: none recorded; the reply ends inside "reasons"`
	if diff := cmp.Diff(want, stepCall(t, res).AnswerNotes); diff != "" {
		t.Errorf("AnswerNotes (-want +got):\n%s", diff)
	}
}

// stepCall decodes the Call a result's one step holds.
func stepCall(t *testing.T, res *router.Result) chatworker.Call {
	t.Helper()
	var call chatworker.Call
	if len(res.Steps) != 1 || json.Unmarshal(res.Steps[0].Output, &call) != nil {
		t.Fatalf("Steps = %+v, want one step holding a Call", res.Steps)
	}
	return call
}
