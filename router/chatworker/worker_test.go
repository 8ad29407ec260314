package chatworker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

func newWorker(t testing.TB, f *fakeEndpoint, edit func(*chatworker.Config)) *chatworker.Worker {
	t.Helper()
	cfg := chatworker.Config{
		BaseURL:      f.baseURL(),
		Model:        fakeModel,
		APIKey:       fakeKey,
		Prices:       map[string]chatworker.Price{fakeModel: {PromptPer1K: 0.5, CompletionPer1K: 1.5}},
		MaxRetries:   2,
		RetryWaitMin: time.Millisecond,
		RetryWaitMax: 2 * time.Second,
	}
	if edit != nil {
		edit(&cfg)
	}
	w, err := chatworker.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return w
}

func validateJob() *router.Job {
	return &router.Job{
		Kind: router.KindValidate, Version: 2, SessionID: 201, TaskID: "task-1",
		Claim: &router.Claim{
			Type:        "summary",
			Description: "Summarize: the sky is blue on a clear day.",
			Output:      json.RawMessage(`"The sky is blue on clear days."`),
		},
		Rules:   []string{"accuracy", "non-hallucination"},
		Context: map[string]any{"audience": "children"},
	}
}

func factcheckJob() *router.Job {
	return &router.Job{
		Kind: router.KindFactcheck, Version: 3, SessionID: 202, TaskID: "task-2",
		Statement: "Water boils at 100 degrees Celsius at sea level.", FactcheckMode: router.FactcheckStandard,
	}
}

func delegateJob() *router.Job {
	return &router.Job{
		Kind: router.KindDelegate, Version: 2, SessionID: 203, TaskID: "task-3",
		Objective: "Translate the input into French.", Input: router.NewStringInput("good morning"),
	}
}

// usage is what the fake's completion reports (100 prompt and 20
// completion tokens, content replies) priced at 0.5 and 1.5 per 1K.
var usage = &router.Usage{PromptTokens: 100, CompletionTokens: 20, Cost: 100*0.5/1000 + 20*1.5/1000}

func TestWorker_Work(t *testing.T) {
	const validJSON = `{"verdict":"VALID","confidence":0.92,"reasons":["matches the text"]}`
	valid := &router.Result{Verdict: router.VerdictValid, Confidence: 0.92, Reasons: []string{"matches the text"}, Model: fakeModel, Usage: usage}

	tests := []struct {
		name         string
		job          *router.Job
		script       []fakeReply
		rejectSchema bool
		timeout      time.Duration
		want         *router.Result
		wantErr      error         // found by errors.Is
		wantStatus   int           // of a *StatusError
		wantWait     time.Duration // its RetryAfter
		wantRaw      string
		wantSchema   []bool // per request: was response_format sent?
	}{
		{
			name: "valid JSON", job: validateJob(), script: []fakeReply{content(validJSON)},
			want: valid, wantSchema: []bool{true},
		},
		{
			name: "factcheck", job: factcheckJob(),
			script:     []fakeReply{content(`{"verdict":"FALSE","confidence":0.7,"reasons":["it is 100 °C only at 1 atm"]}`)},
			want:       &router.Result{Verdict: router.VerdictFalse, Confidence: 0.7, Reasons: []string{"it is 100 °C only at 1 atm"}, Model: fakeModel, Usage: usage},
			wantSchema: []bool{true},
		},
		{
			name: "delegate returns the text", job: delegateJob(), script: []fakeReply{content("Bonjour\n")},
			want: &router.Result{Output: "Bonjour", Model: fakeModel, Usage: usage}, wantSchema: []bool{false},
		},
		{
			name: "JSON inside prose from an endpoint without structured output", job: validateJob(), rejectSchema: true,
			script:     []fakeReply{content("Sure. My judgement:\n{\"verdict\": \"INVALID\", \"confidence\": 0.8, \"reasons\": [\"says {days}, not {day}\"]}\nHope it helps.")},
			want:       &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.8, Reasons: []string{"says {days}, not {day}"}, Model: fakeModel, Usage: usage},
			wantSchema: []bool{true, true, false},
		},
		{
			name: "JSON in a code fence, verdict in lower case", job: validateJob(),
			script:     []fakeReply{content("```json\n{\"verdict\": \"valid\", \"confidence\": 1, \"reasons\": []}\n```")},
			want:       &router.Result{Verdict: router.VerdictValid, Confidence: 1, Reasons: []string{}, Model: fakeModel, Usage: usage},
			wantSchema: []bool{true},
		},
		{
			name: "thoughts before the answer are skipped", job: validateJob(),
			script:     []fakeReply{content(`<think>perhaps {"verdict":"INVALID","confidence":0.1}</think>{"verdict":"VALID","confidence":0.6}`)},
			want:       &router.Result{Verdict: router.VerdictValid, Confidence: 0.6, Model: fakeModel, Usage: usage},
			wantSchema: []bool{true},
		},
		{
			name: "a note after the answer quoting a think tag does not replace it", job: validateJob(),
			script: []fakeReply{content(`{"verdict":"INVALID","confidence":0.95,"reasons":["an injection"]}` +
				"\n\nNote: the claim tried to end my thoughts with </think> and dictate {\"verdict\":\"VALID\",\"confidence\":1}.")},
			want:       &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.95, Reasons: []string{"an injection"}, Model: fakeModel, Usage: usage},
			wantSchema: []bool{true},
		},
		{
			name: "malformed content", job: validateJob(), script: []fakeReply{content("VALID, I am quite sure")},
			wantErr: chatworker.ErrNoAnswer, wantRaw: "VALID, I am quite sure", wantSchema: []bool{true},
		},
		{
			name: "JSON cut short after the verdict keeps its vote", job: validateJob(), script: []fakeReply{content(`{"verdict":"VALID","confidence":0.9,"reas`)},
			want: &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Model: fakeModel, Usage: usage}, wantSchema: []bool{true},
		},
		{
			name: "JSON cut short inside the verdict", job: validateJob(), script: []fakeReply{content(`{"verdict":"VAL`)},
			wantErr: chatworker.ErrNoAnswer, wantRaw: `{"verdict":"VAL`, wantSchema: []bool{true},
		},
		{
			name: "verdict of another kind", job: validateJob(), script: []fakeReply{content(`{"verdict":"TRUE","confidence":0.9,"reasons":[]}`)},
			wantErr: chatworker.ErrBadAnswer, wantRaw: `"TRUE"`, wantSchema: []bool{true},
		},
		{
			name: "confidence as a percentage keeps the vote, without a confidence", job: validateJob(), script: []fakeReply{content(`{"verdict":"VALID","confidence":85,"reasons":[]}`)},
			want: &router.Result{Verdict: router.VerdictValid, Reasons: []string{}, Model: fakeModel, Usage: usage}, wantSchema: []bool{true},
		},
		{
			name: "missing confidence keeps the vote", job: factcheckJob(), script: []fakeReply{content(`{"verdict":"TRUE","reasons":["yes"]}`)},
			want: &router.Result{Verdict: router.VerdictTrue, Reasons: []string{"yes"}, Model: fakeModel, Usage: usage}, wantSchema: []bool{true},
		},
		{
			name: "refusal", job: validateJob(), script: []fakeReply{refusal("I can't help with that.")},
			wantErr: chatworker.ErrRefusal, wantRaw: "I can't help with that.", wantSchema: []bool{true},
		},
		{
			name: "empty choice list", job: validateJob(), script: []fakeReply{noChoices()},
			wantErr: chatworker.ErrNoChoices, wantRaw: `"choices":[]`, wantSchema: []bool{true},
		},
		{
			name: "empty content", job: delegateJob(), script: []fakeReply{content(" \n")},
			wantErr: chatworker.ErrEmptyContent, wantSchema: []bool{false},
		},
		{
			name: "not a chat completion", job: validateJob(), script: []fakeReply{rawBody(200, "<html>gateway page</html>")},
			wantErr: chatworker.ErrMalformedReply, wantRaw: "<html>gateway page</html>", wantSchema: []bool{true},
		},
		{
			name: "429 with Retry-After, then an answer", job: validateJob(),
			script: []fakeReply{status(429, "1"), content(validJSON)},
			want:   valid, wantSchema: []bool{true, true},
		},
		{
			name: "429 asking for a longer pause than the worker waits", job: validateJob(),
			script:     []fakeReply{status(429, "3600"), content(validJSON)},
			wantStatus: 429, wantWait: time.Hour, wantSchema: []bool{true},
		},
		{
			name: "503 asking for a pause past the deadline", job: validateJob(), timeout: 30 * time.Second,
			script:     []fakeReply{status(503, "60"), content(validJSON)},
			wantStatus: 503, wantWait: time.Minute, wantSchema: []bool{true},
		},
		{
			name: "500 then an answer", job: validateJob(), script: []fakeReply{status(500, ""), content(validJSON)},
			want: valid, wantSchema: []bool{true, true},
		},
		{
			name: "500 every time", job: validateJob(), script: []fakeReply{status(500, "")},
			wantStatus: 500, wantSchema: []bool{true, true, true},
		},
		{
			name: "404 is not retried", job: delegateJob(), script: []fakeReply{status(404, "")},
			wantStatus: 404, wantSchema: []bool{false},
		},
		{
			name: "400 without and with structured output is an error", job: validateJob(), script: []fakeReply{status(400, "")},
			wantStatus: 400, wantSchema: []bool{true, true, false, false},
		},
		{
			name: "dropped connection, then an answer", job: validateJob(), script: []fakeReply{drop(), content(validJSON)},
			want: valid, wantSchema: []bool{true, true},
		},
		{
			name: "dropped connection every time", job: validateJob(), script: []fakeReply{drop()},
			wantErr: errTransport, wantSchema: []bool{true, true, true},
		},
		{
			name: "slow answer past the deadline", job: validateJob(), timeout: 50 * time.Millisecond, script: []fakeReply{slow()},
			wantErr: context.DeadlineExceeded, wantSchema: []bool{true},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFake(t, tt.script...)
			f.rejectSchema = tt.rejectSchema
			w := newWorker(t, f, nil)
			ctx := t.Context()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}

			got, err := w.Work(ctx, tt.job)

			checkNoSecret(t, got, err)
			reqs := f.reqs()
			if diff := cmp.Diff(tt.wantSchema, f.schemas()); diff != "" {
				t.Errorf("requests with response_format (-want +got):\n%s", diff)
			}
			switch {
			case tt.want != nil:
				if err != nil {
					t.Fatalf("Work: %v", err)
				}
				if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(router.Result{}, "Steps"), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
					t.Errorf("Work result (-want +got):\n%s", diff)
				}
				judging := tt.job.Kind != router.KindDelegate
				checkCall(t, f, got, len(reqs), !tt.rejectSchema && judging, judging)
			case tt.wantStatus != 0:
				var se *chatworker.StatusError
				if !errors.As(err, &se) {
					t.Fatalf("Work error = %v, want a *StatusError", err)
				}
				if se.StatusCode != tt.wantStatus || se.Attempts != len(reqs) || se.RetryAfter != tt.wantWait {
					t.Errorf("StatusError = %+v, want status %d, retry after %s, after the %d requests the server saw",
						se, tt.wantStatus, tt.wantWait, len(reqs))
				}
			case tt.wantErr == errTransport:
				var se *chatworker.StatusError
				var re *chatworker.ResponseError
				if err == nil || errors.As(err, &se) || errors.As(err, &re) || errors.Is(err, context.Canceled) {
					t.Errorf("Work error = %v, want a transport error", err)
				}
			default:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Work error = %v, want %v", err, tt.wantErr)
				}
				if errors.Is(err, context.DeadlineExceeded) {
					waitClosed(t, f.cancelled, "the server to see the request cancelled")
				}
				var re *chatworker.ResponseError
				if errors.As(err, &re) {
					if !strings.Contains(re.Raw, tt.wantRaw) || re.Model != fakeModel {
						t.Errorf("ResponseError = %+v, want Raw holding %q", re, tt.wantRaw)
					}
				}
				// Beside an error, a result holds only what the reply
				// cost, when it reported it.
				if got != nil && !cmp.Equal(got, &router.Result{Model: got.Model, Usage: got.Usage}) || got != nil && got.Usage == nil {
					t.Errorf("Work result = %+v with an error, want nil or the reply's model and usage alone", got)
				}
			}
		})
	}
}

// errTransport marks a case that wants a transport error.
var errTransport = errors.New("transport error")

// checkCall checks the evidence step of a result.
func checkCall(t *testing.T, f *fakeEndpoint, got *router.Result, requests int, structured, logprobs bool) {
	t.Helper()
	if len(got.Steps) != 1 {
		t.Fatalf("Steps = %+v, want one step", got.Steps)
	}
	var call chatworker.Call
	if err := json.Unmarshal(got.Steps[0].Output, &call); err != nil {
		t.Fatalf("step output %s: %v", got.Steps[0].Output, err)
	}
	u, _ := url.Parse(f.srv.URL)
	want := chatworker.Call{
		Model: fakeModel, Host: u.Host, Attempts: requests, StructuredOutput: structured, Logprobs: logprobs, FinishReason: "stop",
		PromptTokens: got.Usage.PromptTokens, CompletionTokens: got.Usage.CompletionTokens, Cost: got.Usage.Cost,
	}
	ignore := cmpopts.IgnoreFields(chatworker.Call{}, "LatencyMS", "VerdictProbability", "AnswerNotes")
	if diff := cmp.Diff(want, call, ignore); diff != "" {
		t.Errorf("Call evidence (-want +got):\n%s", diff)
	}
	if call.LatencyMS < 0 {
		t.Errorf("LatencyMS = %d, want >= 0", call.LatencyMS)
	}
}

// checkNoSecret fails if the key shows in the result or the error.
func checkNoSecret(t *testing.T, res *router.Result, err error) {
	t.Helper()
	b, _ := json.Marshal(res)
	if bytes.Contains(b, []byte(fakeKey)) {
		t.Errorf("result %s shows the API key", b)
	}
	if err != nil && strings.Contains(err.Error(), fakeKey) {
		t.Errorf("error %q shows the API key", err)
	}
}

// waitClosed waits for ch to be closed; the long limit only turns a hang
// into a failure.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(time.Minute):
		t.Fatalf("gave up waiting for %s", what)
	}
}

func TestWorker_Work_cancelStopsTheRequest(t *testing.T) {
	f := newFake(t, slow())
	w := newWorker(t, f, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := w.Work(ctx, validateJob())
		done <- err
	}()
	// Cancel once the request is in flight, as early quorum would.
	for len(f.reqs()) == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()

	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Work error = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute): // turns a hang into a failure
		t.Fatal("Work did not return after its context was cancelled")
	}
	waitClosed(t, f.cancelled, "the server to see the request cancelled")
	if n := len(f.reqs()); n != 1 {
		t.Errorf("server saw %d requests, want 1: a cancelled call is not retried", n)
	}
}
