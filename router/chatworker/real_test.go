package chatworker_test

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// TestWorker_realEndpoint calls a real OpenAI-compatible endpoint. It runs
// only when VOUCH_CHAT_BASE_URL and VOUCH_CHAT_MODEL are set (the key, if
// the endpoint needs one, in VOUCH_CHAT_API_KEY), and is skipped otherwise:
// this is the package's one skipped test, since a unit test run must not
// depend on a model server. interop/live/run.sh runs it on llama.cpp's
// server with SmolLM2-135M. For example, with Ollama:
//
//	VOUCH_CHAT_BASE_URL=http://localhost:11434/v1 VOUCH_CHAT_MODEL=llama3.2 \
//	  go test -run TestWorker_realEndpoint -v ./router/chatworker
//
// It checks what the worker owes whatever the model knows: every answer
// read as a verdict of its job's kind, a delegation's output, and the
// evidence. Whether a verdict is the plain answer is the model's worth,
// logged and not checked, unless VOUCH_CHAT_EXPECT_RIGHT is set (for a
// model that knows 2 + 3 and the capital of Germany).
func TestWorker_realEndpoint(t *testing.T) {
	base, model := os.Getenv("VOUCH_CHAT_BASE_URL"), os.Getenv("VOUCH_CHAT_MODEL")
	if base == "" || model == "" {
		t.Skip("set VOUCH_CHAT_BASE_URL and VOUCH_CHAT_MODEL to call a real endpoint")
	}
	temp := 0.0
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections() // the package's leak check runs after
	w, err := chatworker.New(chatworker.Config{
		BaseURL: base, Model: model, APIKey: os.Getenv("VOUCH_CHAT_API_KEY"),
		Temperature: &temp, MaxTokens: 1024, HTTPClient: hc,
	})
	if err != nil {
		t.Fatal(err)
	}
	jobs := []struct {
		job  *router.Job
		want []router.Verdict
	}{
		{&router.Job{Kind: router.KindValidate, Version: 2, Claim: &router.Claim{
			Type: "classification", Description: "What is 2 + 3?", Output: json.RawMessage(`"5"`)},
			Rules: []string{"accuracy"}}, []router.Verdict{router.VerdictValid}},
		{&router.Job{Kind: router.KindFactcheck, Version: 3, Statement: "Paris is the capital of Germany."},
			[]router.Verdict{router.VerdictFalse}},
		{&router.Job{Kind: router.KindDelegate, Version: 2, Objective: "Reply with the single word: ready"}, nil},
	}
	verdicts := map[router.Kind][]router.Verdict{
		router.KindValidate:  {router.VerdictValid, router.VerdictInvalid, router.VerdictRetry, router.VerdictNeedsSpec},
		router.KindFactcheck: {router.VerdictTrue, router.VerdictFalse},
	}
	expectRight := os.Getenv("VOUCH_CHAT_EXPECT_RIGHT") != ""
	for _, j := range jobs {
		ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
		res, err := w.Work(ctx, j.job)
		cancel()
		if err != nil {
			t.Errorf("%s: Work: %v", j.job.Kind, err)
			continue
		}
		t.Logf("%s: %+v", j.job.Kind, res)
		if kinds, ok := verdicts[j.job.Kind]; ok && !slices.Contains(kinds, res.Verdict) {
			t.Errorf("%s: verdict %q, not one of %v", j.job.Kind, res.Verdict, kinds)
		}
		if j.want != nil && !slices.Contains(j.want, res.Verdict) {
			if expectRight {
				t.Errorf("%s: verdict %s, want one of %v for a question this plain", j.job.Kind, res.Verdict, j.want)
			} else {
				t.Logf("%s: verdict %s where the plain answer is %v: the model's worth, not checked", j.job.Kind, res.Verdict, j.want)
			}
		}
		if j.job.Kind == router.KindDelegate && res.Output == "" {
			t.Errorf("delegate: empty output")
		}
		if len(res.Steps) != 1 || res.Model == "" {
			t.Errorf("%s: evidence missing: model %q, steps %v", j.job.Kind, res.Model, res.Steps)
		}
	}
}
