package router

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"sync"
	"testing"
)

// remote is a server on loopback that answers every request with the
// status and body it was last given.
type remote struct {
	mu     sync.Mutex
	status int
	body   []byte
	srv    *httptest.Server
}

func newRemote(f *testing.F) *remote {
	r := &remote{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		r.mu.Lock()
		status, body := r.status, r.body
		r.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		w.Write(body)
	}))
	f.Cleanup(r.srv.Close)
	return r
}

// answer sets the next answer; a status outside 200 to 599 becomes one
// inside.
func (r *remote) answer(status int, body []byte) int {
	if status < 200 || status > 599 {
		status = 200 + (status%400+400)%400
	}
	r.mu.Lock()
	r.status, r.body = status, body
	r.mu.Unlock()
	return status
}

// reencodes fails unless v encodes to JSON that decodes into a new value
// of its type encoding the same.
func reencodes(t *testing.T, v any) {
	t.Helper()
	enc, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("%+v does not encode: %v", v, err)
	}
	again := reflect.New(reflect.TypeOf(v).Elem()).Interface()
	if err := json.Unmarshal(enc, again); err != nil {
		t.Fatalf("%s does not decode again: %v", enc, err)
	}
	if enc2, err := json.Marshal(again); err != nil || !bytes.Equal(enc, enc2) {
		t.Fatalf("%s decodes to a value encoding %s (%v)", enc, enc2, err)
	}
}

// FuzzClientResponse has a remote router answer any status and body to
// each of the Client's calls: a non-2xx answer is an *Error with that
// status, a 2xx one a result or an error wrapping ErrMalformedResponse,
// never anything else; and a result encodes to JSON that reads back to
// the same encoding.
func FuzzClientResponse(f *testing.F) {
	f.Add(uint8(0), 200, []byte(`{"request_id":"r","verdict":"VALID","confidence":0.9,"evidence":{"runs":[{"session_id":"4","label":"VALID"}]}}`))
	f.Add(uint8(1), 200, []byte(`{"output":{"a":1},"consensus":{"agreement":1,"session_pool":[1,"2"]},"runs":[{"session_id":1,"output":[1,2]}]}`))
	f.Add(uint8(2), 409, []byte(`{"type":"urn:vouch:problem:disagreement","status":409,"code":"disagreement","extra":{"runs":[]}}`))
	f.Add(uint8(3), 200, []byte(`{"verdict":"TRUE","confidence":1e308}`))
	f.Add(uint8(4), 200, []byte(`{"message":"pong"}`))
	f.Add(uint8(5), 503, []byte(`not json`))
	f.Add(uint8(6), 200, []byte(`{"sessions":[{"id":"x"}]}`))
	r := newRemote(f)
	c, err := NewClient(r.srv.URL, WithHTTPClient(r.srv.Client()), WithRetry(RetryPolicy{}), WithAPIKey("k"))
	if err != nil {
		f.Fatal(err)
	}
	calls := []func(context.Context) (any, error){
		func(ctx context.Context) (any, error) { return c.ValidateV2(ctx, &ValidateV2Request{SessionID: 1}) },
		func(ctx context.Context) (any, error) { return c.DelegateV3(ctx, &DelegateV3Request{SessionID: 1}) },
		func(ctx context.Context) (any, error) { return c.ValidateV3(ctx, &ValidateV3Request{SessionID: 1}) },
		func(ctx context.Context) (any, error) { return c.Factcheck(ctx, &FactcheckRequest{}) },
		func(ctx context.Context) (any, error) { return nil, c.Ping(ctx) },
		func(ctx context.Context) (any, error) { return c.About(ctx) },
		func(ctx context.Context) (any, error) { return c.Status(ctx) },
		func(ctx context.Context) (any, error) { return c.DelegateV1(ctx, &DelegateV1Request{SessionID: 1}) },
		func(ctx context.Context) (any, error) { return c.ValidateV1(ctx, &ValidateV1Request{SessionID: 1}) },
		func(ctx context.Context) (any, error) { return c.DelegateV2(ctx, &DelegateV2Request{SessionID: 1}) },
		func(ctx context.Context) (any, error) { return c.FactcheckV1(ctx, &FactcheckV1Request{}) },
	}
	f.Fuzz(func(t *testing.T, call uint8, status int, body []byte) {
		status = r.answer(status, body)
		out, err := calls[int(call)%len(calls)](context.Background())
		var p *Error
		switch {
		case status > 299:
			if !errors.As(err, &p) || p.Status != status || p.Title == "" && http.StatusText(status) != "" {
				t.Fatalf("%d %q: error %v, want an *Error of status %d", status, body, err, status)
			}
		case err != nil:
			if !errors.Is(err, ErrMalformedResponse) {
				t.Fatalf("%d %q: error %v, want one wrapping ErrMalformedResponse", status, body, err)
			}
		case out != nil:
			reencodes(t, out)
		}
	})
}

// FuzzHTTPWorker has a remote worker answer any status and body to a
// job, and the engine inspect the result as it does each run's: a
// non-2xx answer is a *RemoteWorkerError of that status, a 2xx one a
// result or an error wrapping ErrMalformedResponse; the run that results
// encodes as JSON, and votes only with a verdict the job's kind allows
// and a confidence within [0, 1] (a delegation with an output).
func FuzzHTTPWorker(f *testing.F) {
	f.Add(uint8(0), 200, []byte(`{"verdict":"VALID","confidence":0.9,"reasons":["ok"],"steps":[{"description":"d","output":{"a":1}}],"usage":{"cost":0.1}}`))
	f.Add(uint8(1), 200, []byte(`{"output":"a summary","model":"m","tools":["t"]}`))
	f.Add(uint8(2), 200, []byte(`{"verdict":"TRUE","confidence":1.5}`))
	f.Add(uint8(0), 504, []byte(`{"type":"urn:vouch:problem:timeout","title":"Gateway Timeout","status":504,"code":"timeout"}`))
	f.Add(uint8(1), 200, []byte(`{"output":null,"steps":[{"output":"x"}]}`))
	r := newRemote(f)
	w := HTTPWorker(r.srv.URL, WithWorkerHTTPClient(r.srv.Client()))
	in, err := NewObjectInput(map[string]any{"text": "hello"})
	if err != nil {
		f.Fatal(err)
	}
	jobs := []*Job{
		{Kind: KindValidate, Version: 3, SessionID: 4, TaskID: "t", Replica: 1, MaxSteps: 3, Input: in, Claim: &Claim{Type: "summary", Output: json.RawMessage(`"a summary"`)}},
		{Kind: KindDelegate, Version: 3, SessionID: 4, TaskID: "t", Replica: 1, Objective: "summarize", Input: in},
		{Kind: KindFactcheck, Version: 1, SessionID: 4, TaskID: "t", Replica: 1, Statement: "17 * 3 = 51"},
	}
	f.Fuzz(func(t *testing.T, kind uint8, status int, body []byte) {
		status = r.answer(status, body)
		job := jobs[int(kind)%len(jobs)]
		res, err := w.Work(context.Background(), job)
		var rwe *RemoteWorkerError
		switch {
		case status > 299:
			if !errors.As(err, &rwe) || rwe.StatusCode != status || rwe.Problem == nil || rwe.Problem.Status != status {
				t.Fatalf("%d %q: error %v, want a *RemoteWorkerError of status %d", status, body, err, status)
			}
			return
		case err != nil:
			if !errors.Is(err, ErrMalformedResponse) {
				t.Fatalf("%d %q: error %v, want one wrapping ErrMalformedResponse", status, body, err)
			}
			return
		}
		o := newOutcome(&session{Session: Session{ID: job.SessionID}}, job, job.TaskID)
		o.inspect(job, res)
		if _, err := json.Marshal(o.Run); err != nil {
			t.Fatalf("the run of %q does not encode: %v", body, err)
		}
		switch {
		case o.Label == LabelError:
			if o.answered() || o.Error == "" {
				t.Fatalf("%q: an ERROR run %+v that answered or says nothing", body, o.Run)
			}
		case job.Kind == KindDelegate:
			if o.Label != LabelOK || !json.Valid(o.Output) || string(o.Output) == "null" {
				t.Fatalf("%q: a delegation run %+v with output %q", body, o.Run, o.Output)
			}
		case !slices.Contains(validVerdicts[job.Kind], Verdict(o.Label)) || !(o.Confidence >= 0 && o.Confidence <= 1):
			t.Fatalf("%q: a %s run %+v votes", body, job.Kind, o.Run)
		}
	})
}

// FuzzWorkerHandler posts any body as a job to NewWorkerHandler: the
// worker runs only a job that decoded, and then gets it as decoded; any
// other body is a 400 or 413 problem, never a 500.
func FuzzWorkerHandler(f *testing.F) {
	f.Add([]byte(`{"kind":"validate","version":3,"session_id":4,"task_id":"t","replica":1,"timeout_ms":1000,"claim":{"type":"summary","output":"a summary"},"context":{"task_input":{"text":"a"}}}`))
	f.Add([]byte(`{"kind":"delegate","session_id":"4","objective":"o","input":[1,2],"timeout_ms":-5}`))
	f.Add([]byte(`{"kind":"factcheck","statement":"s","session_id":1e3}`))
	f.Add([]byte(`{"kind":"validate","kind":"delegate"}`))
	var got *Job
	h := NewWorkerHandler(WorkerFunc(func(_ context.Context, job *Job) (*Result, error) {
		got = job
		return &Result{Verdict: VerdictValid, Confidence: 1}, nil
	}))
	f.Fuzz(func(t *testing.T, body []byte) {
		got = nil
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if got == nil {
			var p Error
			if rec.Code != 400 && rec.Code != 413 || json.Unmarshal(rec.Body.Bytes(), &p) != nil || p.Status != rec.Code {
				t.Fatalf("%q: the worker did not run, and the answer is %d %q", body, rec.Code, rec.Body)
			}
			return
		}
		if rec.Code != http.StatusOK {
			t.Fatalf("%q: the worker ran, and the answer is %d %q", body, rec.Code, rec.Body)
		}
		reencodes(t, got)
	})
}
