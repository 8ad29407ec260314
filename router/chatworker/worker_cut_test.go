package chatworker_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// cut answers with a chat completion whose content the endpoint cut at
// max_tokens: finish_reason "length".
func cut(content string) fakeReply {
	return func(f *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-cut", "object": "chat.completion", "created": 1700000000, "model": f.model,
			"choices": []any{map[string]any{"index": 0, "finish_reason": "length",
				"message": map[string]any{"role": "assistant", "content": content}}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 8, "total_tokens": 108},
		})
	}
}

// A reply the endpoint cut at max_tokens holds a delegation's answer only
// in part ("The answer is 4" of "The answer is 42"), so it is no answer:
// a *ResponseError wrapping ErrCutReply, which the engine records as an
// ERROR run, never an output that votes. A judgement cut before its
// verdict is complete fails with ErrNoAnswer, as before, and now says it
// was cut; one cut after a complete verdict keeps its vote, as the
// package documents.
func TestWorker_Work_cutReply(t *testing.T) {
	const reason = "finish_reason: length"
	for _, tc := range []struct {
		name    string
		job     *router.Job
		reply   string
		verdict router.Verdict // the vote kept; "" for an error naming the cut
		err     error          // the error wrapped, without a vote
	}{
		{"a delegation", delegateJob(), "The answer is 4", "", chatworker.ErrCutReply},
		{"a validation cut in its verdict", validateJob(), `{"verdict":"VAL`, "", chatworker.ErrNoAnswer},
		{"a fact check cut before its answer", factcheckJob(), `Let me think about the boiling point of`, "", chatworker.ErrNoAnswer},
		{"a validation cut after its verdict", validateJob(), `{"verdict":"VALID","confidence":0.9,"reasons":["the sky is`, router.VerdictValid, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, cut(tc.reply))
			res, err := newWorker(t, f, nil).Work(t.Context(), tc.job)
			if tc.verdict != "" {
				if err != nil || res.Verdict != tc.verdict {
					t.Fatalf("Work = %+v, %v; want verdict %s kept", res, err, tc.verdict)
				}
				return
			}
			var re *chatworker.ResponseError
			if !errors.As(err, &re) || !errors.Is(err, tc.err) || !strings.Contains(err.Error(), reason) {
				t.Fatalf("Work = %+v, %v; want a *ResponseError wrapping %v naming %q", res, err, tc.err, reason)
			}
			if diff := cmp.Diff(tc.reply, re.Raw); diff != "" {
				t.Errorf("Raw (-want +got):\n%s", diff)
			}
		})
	}
}

// Over the engine, a replica whose reply was cut is an ERROR run whose
// error names the cut, not an output: a call on that replica alone fails
// with 502 all_replicas_failed.
func TestEngine_DelegateV3_cutReplyIsNoVote(t *testing.T) {
	e, err := router.NewEngine([]router.Session{{ID: 1, Worker: newWorker(t, newFake(t, cut("4")), nil)}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := e.DelegateV3(t.Context(), &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "What is 6 * 7?"},
		Consensus:    router.ConsensusRequest{Replicas: 1},
	})
	var p *router.Error
	if !errors.As(err, &p) {
		t.Fatalf("DelegateV3 = %+v, %v; want the 502 of a run that gave no answer", resp, err)
	}
	var extra struct{ Runs []router.Run }
	if err := json.Unmarshal(p.Extra, &extra); err != nil {
		t.Fatal(err)
	}
	type run struct {
		Status int
		Label  router.Label
		Cut    bool
	}
	var got []run
	for _, r := range extra.Runs {
		got = append(got, run{p.Status, r.Label, strings.Contains(r.Error, "finish_reason: length")})
	}
	want := []run{{http.StatusBadGateway, router.LabelError, true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("runs (-want +got):\n%s", diff)
	}
}

// cutThinking answers as a reasoning model behind a server that moves its
// thoughts out of content (vLLM's reasoning parser, DeepSeek's API) does
// when max_tokens ran out before the answer began: thoughts in
// reasoning_content, longer than RawLimit, no content, finish_reason
// "length".
func cutThinking() fakeReply {
	return func(f *fakeEndpoint, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"id": "chatcmpl-cut", "object": "chat.completion", "created": 1700000000, "model": f.model,
			"choices": []any{map[string]any{"index": 0,
				"message":       map[string]any{"role": "assistant", "content": nil, "reasoning_content": strings.Repeat("Let me weigh the claim. ", 100)},
				"finish_reason": "length"}},
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 512, "total_tokens": 612},
		})
	}
}

// A reply left empty because the endpoint cut it at max_tokens (a
// reasoning model that spent them all on its thoughts) is an error that
// says it was cut, in Detail, as any judgement cut short does: the raw
// reply, cut to RawLimit, does not reach its finish_reason, and "no
// content" alone does not tell the host to raise max_tokens.
func TestWorker_Work_emptyCutReplySaysItWasCut(t *testing.T) {
	for _, tc := range []struct {
		name string
		job  *router.Job
	}{
		{"a validation", validateJob()},
		{"a fact check", factcheckJob()},
		{"a delegation", delegateJob()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t, cutThinking())
			res, err := newWorker(t, f, nil).Work(t.Context(), tc.job)
			var re *chatworker.ResponseError
			if !errors.As(err, &re) || !errors.Is(err, chatworker.ErrEmptyContent) {
				t.Fatalf("Work = %+v, %v; want a *ResponseError wrapping ErrEmptyContent", res, err)
			}
			const want = "the reply was cut at max_tokens (finish_reason: length)"
			if diff := cmp.Diff(want, re.Detail); diff != "" {
				t.Errorf("Detail (-want +got):\n%s", diff)
			}
		})
	}
}
