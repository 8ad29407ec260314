package trusta2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"
	"github.com/a2aproject/a2a-go/a2aclient/agentcard"
	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/problem"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust"
	vouchcard "github.com/vouchkit/vouch/trust/agentcard"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// statuses are the statuses each skill answers.
var statuses = map[string][]string{
	trusta2a.SkillValidateClaim: {"VALID", "INVALID", "RETRY", "NEEDS_SPEC"},
	trusta2a.SkillDelegateTask:  {"VALID", "INVALID", "RETRY", "NEEDS_SPEC"},
	trusta2a.SkillArbitrate:     {"SELLER_VALID", "SELLER_INVALID", "INCONCLUSIVE"},
}

// TestCard resolves the card with the SDK's resolver: its url is the
// endpoint the client talks to, over the transport it names.
func TestCard(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	card, err := agentcard.NewResolver(f.hc).Resolve(context.Background(), f.url)
	if err != nil {
		t.Fatal(err)
	}
	want := []a2a.AgentInterface{{URL: f.url + vouchcard.DefaultA2APath, Transport: a2a.TransportProtocolJSONRPC}}
	got := []a2a.AgentInterface{{URL: card.URL, Transport: card.PreferredTransport}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("card url and transport (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, card.AdditionalInterfaces); diff != "" {
		t.Errorf("additionalInterfaces (-want +got):\n%s", diff)
	}
	if s, ok := card.SecuritySchemes["bearer"].(a2a.HTTPAuthSecurityScheme); !ok || s.Scheme != "bearer" {
		t.Errorf("securitySchemes = %#v, want HTTP bearer", card.SecuritySchemes)
	}
	var ids []string
	for _, s := range card.Skills {
		ids = append(ids, s.ID)
	}
	if diff := cmp.Diff([]string{"validate_claim", "delegate_task", "arbitrate", "factcheck"}, ids); diff != "" {
		t.Errorf("skills (-want +got):\n%s", diff)
	}
}

// TestCardExamples sends every example of every skill on the card, as
// written, as a text part, and the JSON ones also as a data part: each is
// answered by its skill.
func TestCardExamples(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	c := f.client(t, "demo-key", nil)
	for _, s := range vouchcard.Skills() {
		for _, ex := range s.Examples {
			parts := []a2a.Part{a2a.TextPart{Text: ex}}
			var data map[string]any
			if json.Unmarshal([]byte(ex), &data) == nil {
				parts = append(parts, a2a.DataPart{Data: data})
			}
			for _, p := range parts {
				task, err := send(t, c, p)
				if err != nil {
					t.Errorf("%s: %T %q: %v", s.ID, p, ex, err)
					continue
				}
				got, skill := answer(t, task)
				status, _ := got["status"].(string)
				if skill != s.ID {
					t.Errorf("%T %q: answered by %s, want %s", p, ex, skill, s.ID)
				}
				if s.ID == trusta2a.SkillFactcheck {
					status, _ = got["verdict"].(string)
					if status != "TRUE" && status != "FALSE" {
						t.Errorf("%T %q: verdict %q, want TRUE or FALSE", p, ex, status)
					}
				} else if !slices.Contains(statuses[s.ID], status) {
					t.Errorf("%T %q: status %q, want one of %v", p, ex, status, statuses[s.ID])
				}
			}
		}
	}
}

func TestMessageSend_verdicts(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	c := f.client(t, "demo-key", nil)
	tests := []struct {
		part a2a.Part
		key  string
		want any
		runs float64
	}{
		{a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?"`}, "status", "VALID", 3},
		{a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 50" for the task "What is 17 * 3?"`}, "status", "INVALID", 3},
		{a2a.TextPart{Text: `validate the claimed result “17 * 3 = 50” with policy oracle`}, "status", "INVALID", 5},
		{a2a.TextPart{Text: `Is "17 * 3 = 51" a correct answer to "What is 17 * 3?" with policy fast`}, "status", "VALID", 1},
		{a2a.DataPart{Data: map[string]any{"claimed_result": "17 * 3 = 50", "input": "What is 17 * 3?"}}, "status", "INVALID", 3},
		{a2a.DataPart{Data: map[string]any{"skill": "validate_claim", "claimed_result": "17 * 3 = 51", "policy": "fast"}}, "status", "VALID", 1},
		{a2a.DataPart{Data: map[string]any{"claimed_result": "17 * 3 = 50", "dispute_context": "the buyer says it is wrong"}}, "status", "SELLER_INVALID", 3},
		{a2a.TextPart{Text: `Delegate the task "17 * 3" with policy fast`}, "result", "51", 1},
		{a2a.DataPart{Data: map[string]any{"input": "17 * 3", "answer": "number", "tolerance": map[string]any{"absolute": 0.5}}}, "result", 51.0, 3},
		{a2a.TextPart{Text: "Is it true that 17 * 3 = 50?"}, "verdict", "FALSE", 3},
		{a2a.DataPart{Data: map[string]any{"claim": "17 * 3 = 51", "replicas": 5}}, "verdict", "TRUE", 5},
	}
	for _, tt := range tests {
		task, err := send(t, c, tt.part)
		if err != nil {
			t.Errorf("%+v: %v", tt.part, err)
			continue
		}
		got, _ := answer(t, task)
		if got[tt.key] != tt.want {
			t.Errorf("%+v: %s = %#v, want %#v", tt.part, tt.key, got[tt.key], tt.want)
		}
		runs := got["consensus"] // factcheck's
		if tt.key != "verdict" {
			runs = got["evidence"]
		}
		if r, _ := runs.(map[string]any); r["redundancy"] != tt.runs && r["replicas"] != tt.runs {
			t.Errorf("%+v: runs %v, want %v", tt.part, runs, tt.runs)
		}
		// The summary counts the runs in words, "1 run" or "3 runs".
		words := fmt.Sprintf(": %v runs, ", tt.runs)
		if tt.runs == 1 {
			words = ": 1 run, "
		}
		for _, p := range task.Artifacts[0].Parts {
			if text, ok := p.(a2a.TextPart); ok && !strings.Contains(text.Text, words) {
				t.Errorf("%+v: summary %q, want %q in it", tt.part, text.Text, words)
			}
		}
		if ev, ok := got["evidence"].(map[string]any); ok && tt.key != "verdict" {
			if _, ok := ev["disagreements"].([]any); !ok {
				t.Errorf("%+v: disagreements %#v, want an array", tt.part, ev["disagreements"])
			}
		}
	}
}

// TestMessageSend_receipt asks for an inline receipt: the answer carries
// it as an object and as the text issued, which verifies.
func TestMessageSend_receipt(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	c := f.client(t, "demo-key", nil)
	task, err := send(t, c, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" with receipt inline`})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := answer(t, task)
	text, _ := got["receipt_json"].(string)
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil || !cmp.Equal(obj, got["receipt"]) {
		t.Fatalf("receipt_json %q (%v) is not the receipt %v", text, err, got["receipt"])
	}
	v, err := f.verifier.Verify([]byte(text), receipt.Originals{}, time.Time{})
	if err != nil || !v.Valid() {
		t.Fatalf("the receipt does not verify: %+v, %v", v, err)
	}
	if v.Receipt.Decision.Status != "VALID" {
		t.Errorf("receipt decision %+v, want VALID", v.Receipt.Decision)
	}

	task, err = send(t, c, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51"`})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := answer(t, task); got["receipt"] != nil || got["receipt_json"] != nil {
		t.Errorf("a receipt came unasked: %v", got)
	}
}

func TestMessageSend_badInput(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	c := f.client(t, "demo-key", nil)
	tests := []struct {
		parts []a2a.Part
		want  string
	}{
		{[]a2a.Part{a2a.TextPart{Text: "hello"}}, "text: is in none of the forms"},
		{[]a2a.Part{a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" with policy gold`}}, "policy"},
		{[]a2a.Part{a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" please`}}, `"please" after the validate_claim sentence is not an option`},
		{[]a2a.Part{a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51`}}, "is not closed"},
		{[]a2a.Part{a2a.TextPart{Text: `{"claimed_result": `}}, "not a JSON object"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "What is 17 * 3?", "color": "red"}}}, `invalid params: color: is not an argument of delegate_task`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "What is 17 * 3?", "a.b": 1}}}, `invalid params: ["a.b"]: is not an argument of delegate_task`},
		{[]a2a.Part{a2a.TextPart{Text: `{"claimed_result":"x","reciept":"inline"}`}}, `invalid params: reciept: is not an argument of validate_claim`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"policy": "safe"}}}, "data: names no skill"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": ""}}}, "input: must not be empty in delegation mode"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": map[string]any{}}}}, "input: must not be empty in delegation mode"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"skill": "delegate_task", "input": map[string]any{}}}}, "input: must not be empty in delegation mode"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"skill": "delegate_task", "objective": " "}}}, "objective: objective or input is required"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "x", "answer": "text"}}}, "answer: "},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "x", "answer": 1}}}, "answer: must be a string"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "x", "answer": "number", "tolerance": map[string]any{"abs": 1}}}}, "tolerance.abs: is not a member"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "x", "answer": "number", "tolerance": map[string]any{"absolute": -1}}}}, "tolerance.absolute: must be at least 0"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "x", "answer": "number", "tolerance": "1%"}}}, "tolerance: must be an object"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "x", "tolerance": map[string]any{"absolute": 1}}}}, `tolerance: applies only with task.answer "number"`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claimed_result": "x", "answer": "number"}}}, `invalid params: answer: is not an argument of validate_claim`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"skill": "summarize"}}}, "skill: unknown skill"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"skill": "arbitrate", "claimed_result": "x"}}}, "dispute_context: is required"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claimed_result": "x", "receipt": "always"}}}, `receipt: unknown receipt mode "always"`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claim": "17 * 3 = 51", "replicas": 4}}}, "replicas: must be 3 or 5"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claim": "17 * 3 = 51", "replicas": "5"}}}, `replicas: must be 3 or 5, got "5"`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claim": 51}}}, "claim: must be a string"},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claimed_result": "x", "policy": ""}}}, `policy: is "": leave the argument out for its default`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claimed_result": "x", "receipt": ""}}}, `receipt: is "": leave the argument out for its default`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"input": "x", "answer": ""}}}, `answer: is "": leave the argument out for its default`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claim": "17 * 3 = 51", "mode": ""}}}, `mode: is "": leave the argument out for its default`},
		{[]a2a.Part{a2a.DataPart{Data: map[string]any{"claim": "a"}}, a2a.DataPart{Data: map[string]any{"claim": "b"}}}, "2 data parts"},
		{[]a2a.Part{a2a.FilePart{File: a2a.FileURI{URI: "https://example.com/claim.txt"}}}, "parts: a file part is not read"},
		{nil, "the message has no text and no data part"},
	}
	for _, tt := range tests {
		_, err := send(t, c, tt.parts...)
		if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want invalid params naming %q", tt.parts, err, tt.want)
		}
	}
}

// TestTasksGet reads an answered task back; another caller cannot.
func TestTasksGet(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	demo, acme := f.client(t, "demo-key", nil), f.client(t, "acme-key", nil)
	task, err := send(t, demo, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51"`})
	if err != nil {
		t.Fatal(err)
	}
	got, err := demo.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(task, got); diff != "" {
		t.Errorf("tasks/get (-message/send +tasks/get):\n%s", diff)
	}
	if _, err := acme.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("another caller's tasks/get: %v, want task not found", err)
	}
}

// TestMaxTasks keeps the newest tasks only.
func TestMaxTasks(t *testing.T) {
	f := newFixture(t, trusta2a.Config{MaxTasks: 2})
	c := f.client(t, "demo-key", nil)
	var ids []a2a.TaskID
	for range 3 {
		task, err := send(t, c, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" with policy fast`})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	for i, id := range ids {
		_, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: id})
		if kept := err == nil; kept != (i > 0) {
			t.Errorf("task %d: tasks/get error %v; want the first forgotten, the others kept", i, err)
		}
	}
}

// TestMaxTasks_callersKeepTheirTasks: one caller's calls never evict
// another caller's task. A full store forgets the oldest task of the
// caller holding the most, and a caller at its own bound
// (MaxTasksPerCaller) forgets its own oldest.
func TestMaxTasks_callersKeepTheirTasks(t *testing.T) {
	f := newFixture(t, trusta2a.Config{MaxTasks: 3})
	demo, acme := f.client(t, "demo-key", nil), f.client(t, "acme-key", nil)
	sendN := func(c *a2aclient.Client, n int) []a2a.TaskID {
		var ids []a2a.TaskID
		for range n {
			task, err := send(t, c, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" with policy fast`})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, task.ID)
		}
		return ids
	}
	kept := func(c *a2aclient.Client, ids []a2a.TaskID) []bool {
		var got []bool
		for _, id := range ids {
			_, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: id})
			if err != nil && !errors.Is(err, a2a.ErrTaskNotFound) {
				t.Fatal(err)
			}
			got = append(got, err == nil)
		}
		return got
	}
	demoIDs := sendN(demo, 1)
	acmeIDs := sendN(acme, 5)
	if diff := cmp.Diff([]bool{true}, kept(demo, demoIDs)); diff != "" {
		t.Errorf("demo's task after acme's 5 calls in a store of 3 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, false, false, true, true}, kept(acme, acmeIDs)); diff != "" {
		t.Errorf("acme's tasks (-want +got):\n%s", diff)
	}

	f = newFixture(t, trusta2a.Config{MaxTasks: 10, MaxTasksPerCaller: 2})
	demo, acme = f.client(t, "demo-key", nil), f.client(t, "acme-key", nil)
	demoIDs = sendN(demo, 2)
	acmeIDs = sendN(acme, 3)
	if diff := cmp.Diff([]bool{true, true}, kept(demo, demoIDs)); diff != "" {
		t.Errorf("demo's tasks (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]bool{false, true, true}, kept(acme, acmeIDs)); diff != "" {
		t.Errorf("acme's tasks beyond MaxTasksPerCaller 2 (-want +got):\n%s", diff)
	}
}

func TestUnauthorized(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	body := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Is it true that 1 * 1 = 1?"}]}}}`
	for key, want := range map[string]string{"": `Bearer realm="vouch"`, "Bearer wrong": `Bearer realm="vouch", error="invalid_token"`} {
		req, _ := http.NewRequest(http.MethodPost, f.url+vouchcard.DefaultA2APath, strings.NewReader(body))
		if key != "" {
			req.Header.Set("Authorization", key)
		}
		resp, err := f.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var p problem.Details
		err = json.NewDecoder(resp.Body).Decode(&p)
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != want || err != nil {
			t.Errorf("Authorization %q: %s %q (%v), want 401 %q", key, resp.Status, resp.Header.Get("WWW-Authenticate"), err, want)
		}
		// The refusal names the request as every problem of the API does.
		if id := resp.Header.Get("X-Request-Id"); id == "" || p.RequestID != id || p.Instance != vouchcard.DefaultA2APath {
			t.Errorf("Authorization %q: X-Request-Id %q, problem %+v; want the id in both, and the path as instance", key, id, p)
		}
	}
}

// TestTraceparent continues the caller's trace: the trust call's span is
// a child of the span the traceparent names, and the answer's trace_id is
// the caller's.
func TestTraceparent(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	const traceID, spanID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	c := f.client(t, "demo-key", map[string]string{"traceparent": "00-" + traceID + "-" + spanID + "-01"})
	task, err := send(t, c, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" with policy fast`})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := answer(t, task); got["trace_id"] != traceID {
		t.Errorf("trace_id %v, want the caller's %s", got["trace_id"], traceID)
	}
	var parents []trace.SpanContext
	for _, s := range f.rec.Spans.GetSpans() {
		if s.Name == "trust.call" {
			parents = append(parents, s.Parent)
		}
	}
	if len(parents) != 1 || parents[0].TraceID().String() != traceID || parents[0].SpanID().String() != spanID || !parents[0].IsRemote() {
		t.Errorf("trust.call parents %v, want the caller's span %s of trace %s", parents, spanID, traceID)
	}
}

func TestNewHandler_noCaller(t *testing.T) {
	if _, err := trusta2a.NewHandler(trusta2a.Config{}); err == nil {
		t.Error("NewHandler without a Caller: no error")
	}
}

func TestNewHandler_negativeBounds(t *testing.T) {
	for field, cfg := range map[string]trusta2a.Config{
		"MaxTasks":          {Caller: failing{}, MaxTasks: -1},
		"MaxTasksPerCaller": {Caller: failing{}, MaxTasksPerCaller: -1},
		"MaxTaskBytes":      {Caller: failing{}, MaxTaskBytes: -1},
		"BackgroundTimeout": {Caller: failing{}, BackgroundTimeout: -1},
	} {
		if _, err := trusta2a.NewHandler(cfg); err == nil || !strings.Contains(err.Error(), "Config."+field) {
			t.Errorf("NewHandler with a negative %s: %v, want an error naming it", field, err)
		}
	}
}

// failing is a trust service whose every call fails: with a problem of
// status code, or with a plain error when code is 0.
type failing struct{ code int }

func (f failing) Call(context.Context, *trust.Request) (*trust.Response, error) {
	if f.code == 0 {
		return nil, errors.New("no worker answered")
	}
	return nil, problem.New(f.code, "bad_gateway", "the workers are unreachable")
}

// TestMessageSend_callFails ends the task failed, saying why, when the
// call fails: a problem's detail and code, or "internal error" for an
// error that is not a problem; a refusal of the request (4xx) is invalid
// params.
func TestMessageSend_callFails(t *testing.T) {
	for _, tt := range []struct {
		code  int
		state a2a.TaskState
		want  string
	}{
		{0, a2a.TaskStateFailed, "validate_claim failed: internal error (500 internal)"}, // logged, not shown
		{http.StatusBadGateway, a2a.TaskStateFailed, "validate_claim failed: the workers are unreachable (502 bad_gateway)"},
		{http.StatusUnprocessableEntity, "", "invalid params: validate_claim: the workers are unreachable (422 bad_gateway)"},
	} {
		h, err := trusta2a.NewHandler(trusta2a.Config{Caller: failing{tt.code}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		c, err := a2aclient.NewFromEndpoints(context.Background(), []a2a.AgentInterface{{URL: srv.URL, Transport: a2a.TransportProtocolJSONRPC}},
			a2aclient.WithJSONRPCTransport(srv.Client()))
		if err != nil {
			t.Fatal(err)
		}
		task, err := send(t, c, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51"`})
		switch {
		case tt.state == "":
			if !errors.Is(err, a2a.ErrInvalidParams) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%d: error %v, want invalid params %q", tt.code, err, tt.want)
			}
		case err != nil:
			t.Errorf("%d: %v", tt.code, err)
		case task.Status.State != tt.state || task.Status.Message == nil || task.Status.Message.Parts[0].(a2a.TextPart).Text != tt.want:
			t.Errorf("%d: task %s %+v, want %s saying %q", tt.code, task.Status.State, task.Status.Message, tt.state, tt.want)
		}
		c.Destroy()
		srv.Close()
	}
}

// TestNoStreaming: the card announces no streaming, and version 0.3's
// streaming methods, which the SDK would serve (a resubscription finds a
// running task by its id alone), answer UnsupportedOperation.
func TestNoStreaming(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for _, c := range []struct{ method, params string }{
		{"message/stream", `{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Validate the claimed result \"17 * 3 = 51\""}]}}`},
		{"tasks/resubscribe", `{"id":"0199a1b2-0000-7000-8000-000000000000"}`},
	} {
		_, rpcErr := f.post1(t, "demo-key", "", `{"jsonrpc":"2.0","id":1,"method":"`+c.method+`","params":`+c.params+`}`)
		if rpcErr == nil || rpcErr.Code != -32004 {
			t.Errorf("%s: error %+v, want -32004 UnsupportedOperation", c.method, rpcErr)
		}
	}
}

// TestReadAsSent: a version 0.3 body that decoding would read otherwise
// than it was sent is refused, as version 1.0 refuses it: a member named
// twice (the last copy would win) is invalid params naming it, bytes
// that are not UTF-8 a parse error, and an envelope that names a member
// twice in two cases, gives one of the wrong type (an id that is no
// string, number or null among them) or is not an object an invalid
// request.
func TestReadAsSent(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	message := func(data string) string {
		return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":` + data + `}]}}}`
	}
	for _, c := range []struct {
		body string
		code int
		want string
	}{
		{message(`{"claim":"17 * 3 = 50","claim":"17 * 3 = 51"}`), -32602, "params.message.parts[0].data.claim"},
		{message("{\"claim\":\"17 * 3 = 51 \xff\"}"), -32700, "UTF-8"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","Method":"tasks/get","params":{"id":"t"}}`, -32600, `method: members "Method" and "method"`},
		{`{"jsonrpc":2,"id":1,"method":"tasks/get","params":{"id":"t"}}`, -32600, "jsonrpc: expected a string"},
		{`[{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}]`, -32600, "expected an object, got array"},
		{`{"jsonrpc":"2.0","id":{"a":1},"method":"tasks/get","params":{"id":"t"}}`, -32600, "id: must be a string, a number or null, got an object"},
		{`{"jsonrpc":"2.0","id":true,"method":"ListTasks","params":{}}`, -32600, "id: must be a string, a number or null, got a boolean"},
	} {
		for _, version := range []string{"", "1.0"} {
			if version == "1.0" && c.code == -32602 {
				continue // 1.0's own params errors: TestSendMessage_v1BadInput
			}
			_, rpcErr := f.post1(t, "demo-key", version, c.body)
			if rpcErr == nil || rpcErr.Code != c.code || !strings.Contains(rpcErr.Message, c.want) {
				t.Errorf("version %q, %s: error %+v, want %d naming %q", version, c.body, rpcErr, c.code, c.want)
			}
		}
	}
}
