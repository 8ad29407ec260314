package chatworker_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// FuzzWorkerReply has a model server on loopback answer any status,
// Retry-After and body to each kind of job (a validation of any claimed
// output, which the prompt quotes): the worker never panics; a
// non-2xx answer is a *StatusError of that status and a pause of at least
// zero; a 2xx one a result or a *ResponseError wrapping one of its
// documented reasons; a validation's or fact check's result holds a
// verdict of its kind and a confidence within [0, 1], and its step the
// call's evidence as JSON, with a verdict probability, when measured,
// within [0, 1].
func FuzzWorkerReply(f *testing.F) {
	reply := func(content string, logprobs string) []byte {
		c, _ := json.Marshal(content)
		return []byte(`{"model":"m","choices":[{"message":{"content":` + string(c) + `},"finish_reason":"stop","logprobs":` + logprobs + `}],"usage":{"prompt_tokens":10,"completion_tokens":5}}`)
	}
	answer := `{"verdict":"VALID","confidence":0.9,"reasons":["ok"]}`
	f.Add(uint8(0), 200, "", reply(answer, `{"content":[{"token":"{\"verdict\":\"","logprob":-0.1},{"token":"VALID","logprob":-0.05,"bytes":[86,65,76,73,68]},{"token":"\",\"confidence\":0.9,\"reasons\":[\"ok\"]}","logprob":0}]}`), []byte(`"51"`))
	f.Add(uint8(1), 200, "", reply(`{"verdict":"TRUE","confidence":1}`, `null`), []byte(`"51"`))
	f.Add(uint8(2), 200, "", reply("  a summary  ", `null`), []byte(`"51"`))
	f.Add(uint8(0), 200, "", []byte(`{"choices":[{"message":{"content":null,"refusal":"no"}}]}`), []byte(`{"answer":"\"51\""}`))
	f.Add(uint8(0), 429, "7", []byte(`{"error":{"message":"slow down"}}`), []byte(`"51"`))
	f.Add(uint8(1), 503, "Wed, 21 Oct 2015 07:28:00 GMT", []byte(`busy`), []byte(`"51"`))
	// A log probability above 0 is no probability (1e308's is not even finite).
	f.Add(uint8(0), 200, "", reply(answer, `{"content":[{"token":"{\"verdict\":\"VALID","logprob":5}]}`), []byte(`"51"`))
	f.Add(uint8(1), 200, "", reply(`{"verdict":"TRUE","confidence":1}`, `{"content":[{"token":"{\"verdict\":\"TRUE","logprob":1e308}]}`), []byte(`"51"`))
	var (
		mu   sync.Mutex
		next struct {
			status     int
			retryAfter string
			body       []byte
		}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if next.retryAfter != "" {
			w.Header().Set("Retry-After", next.retryAfter)
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(next.status)
		w.Write(next.body)
	}))
	f.Cleanup(srv.Close)
	in, err := router.NewObjectInput(map[string]any{"q": "17 * 3"})
	if err != nil {
		f.Fatal(err)
	}
	jobs := []*router.Job{
		{Kind: router.KindValidate, Input: in, Claim: &router.Claim{Type: "answer", Output: json.RawMessage(`"51"`)}},
		{Kind: router.KindFactcheck, Statement: "17 * 3 = 51"},
		{Kind: router.KindDelegate, Objective: "multiply", Input: in},
	}
	reasons := []error{chatworker.ErrMalformedReply, chatworker.ErrNoChoices, chatworker.ErrRefusal, chatworker.ErrEmptyContent, chatworker.ErrNoAnswer, chatworker.ErrBadAnswer}
	f.Fuzz(func(t *testing.T, kind uint8, status int, retryAfter string, body, claim []byte) {
		if status < 200 || status > 599 {
			status = 200 + (status%400+400)%400
		}
		if strings.ContainsFunc(retryAfter, func(r rune) bool { return r < ' ' || r > '~' }) {
			retryAfter = "" // not a header value a server can send
		}
		mu.Lock()
		next.status, next.retryAfter, next.body = status, retryAfter, body
		mu.Unlock()
		// A new worker each time: a worker learns which request members the
		// endpoint takes.
		w, err := chatworker.New(chatworker.Config{BaseURL: srv.URL + "/v1", Model: "m", HTTPClient: srv.Client(), MaxRetries: -1})
		if err != nil {
			t.Fatal(err)
		}
		job := jobs[int(kind)%len(jobs)]
		if job.Kind == router.KindValidate && json.Valid(claim) { // the router's caller wrote it
			c := *job
			c.Claim = &router.Claim{Type: "answer", Output: claim}
			job = &c
		}
		res, err := w.Work(context.Background(), job)
		var se *chatworker.StatusError
		var re *chatworker.ResponseError
		switch {
		case status > 299:
			if !errors.As(err, &se) || se.StatusCode != status || se.RetryAfter < 0 {
				t.Fatalf("%d %q: error %v, want a *StatusError of status %d", status, body, err, status)
			}
			return
		case err != nil:
			if !errors.As(err, &re) || !slices.ContainsFunc(reasons, func(r error) bool { return errors.Is(err, r) }) || len(re.Raw) > chatworker.RawLimit {
				t.Fatalf("%d %q: error %v, want a *ResponseError with a documented reason", status, body, err)
			}
			return
		}
		if len(res.Steps) != 1 {
			t.Fatalf("%q: result %+v, want one step", body, res)
		}
		var call chatworker.Call
		if err := json.Unmarshal(res.Steps[0].Output, &call); err != nil {
			t.Fatalf("%q: the step %s is not a Call: %v", body, res.Steps[0].Output, err)
		}
		if p := call.VerdictProbability; p != nil && !(*p >= 0 && *p <= 1) {
			t.Fatalf("%q: verdict probability %v", body, *p)
		}
		if job.Kind == router.KindDelegate {
			if s, ok := res.Output.(string); !ok || s != strings.TrimSpace(s) {
				t.Fatalf("%q: a delegation's output %#v", body, res.Output)
			}
			return
		}
		want := []router.Verdict{router.VerdictValid, router.VerdictInvalid, router.VerdictRetry, router.VerdictNeedsSpec}
		if job.Kind == router.KindFactcheck {
			want = []router.Verdict{router.VerdictTrue, router.VerdictFalse}
		}
		if !slices.Contains(want, res.Verdict) || !(res.Confidence >= 0 && res.Confidence <= 1) {
			t.Fatalf("%q: a %s result %+v", body, job.Kind, res)
		}
	})
}
