package trust_test

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/internal/fuzzjson"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

var (
	genTrustInput = []string{`"How many apples?"`, `{"q":"x"}`, `{"kind":"array","items":[1,2]}`}
	genTrustBody  = fuzzjson.Vocabulary{
		"mode":   []string{`"delegation"`, `"validation"`, `"arbitration"`},
		"policy": []string{`"fast"`, `"safe"`, `"oracle"`, `"adaptive"`},
		"task": fuzzjson.Vocabulary{
			"type": []string{`"qa"`, `"summary"`}, "input": genTrustInput, "spec": []string{`"say a number"`, `{"s":1}`},
			"claimed_result": []string{`"42"`, `42`, `{"a":1}`, `12345678901234567891`}, "dispute_context": []string{`"late"`, `{"buyer":"no"}`},
			"answer": []string{`"number"`}, "tolerance": fuzzjson.Vocabulary{"absolute": []string{`0.5`, `0`}, "relative": []string{`0.1`, `1`}},
		},
		"context":  fuzzjson.Vocabulary{"agent": []string{`"a"`}, "task_input": genTrustInput},
		"metadata": []string{`{"m":1}`},
		"receipt": fuzzjson.Vocabulary{
			"mode": []string{`"none"`, `"inline"`, `"detached"`},
			"include": fuzzjson.Vocabulary{"consensus_snapshot": []string{`true`, `false`}, "policy_snapshot": []string{`true`}, "input_hash": []string{`true`},
				"output_hash": []string{`true`}, "router_trace_refs": []string{`true`}},
			"ttl": []string{`"7d"`, `"1000d"`, `"1d"`}, "visibility": []string{`"private"`, `"shared"`, `"public"`},
			"counterparties": []string{`["bob"]`, `["alice","bob"]`, `[]`},
		},
		"delegation": fuzzjson.Vocabulary{"agreement": []string{`"exact"`, `"judged"`}},
	}
	genFeedback = fuzzjson.Vocabulary{
		"trace_id": []string{`"4bf92f3577b34da6a3ce929d0e0e4736"`}, "receipt_id": []string{`"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"`},
		"right": []string{`true`, `false`}, "verdict": []string{`"VALID"`, `"INVALID"`},
	}
)

// splitTrustWorker answers by a hash of the job and its session, so that
// sessions disagree now and then. It never fails.
func splitTrustWorker(session int) router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d|%s|%s|%v|%s", session, job.Kind, job.Statement, job.Claim != nil, job.Objective)
		n := h.Sum32()
		switch job.Kind {
		case router.KindDelegate:
			// Outputs that are not I-JSON (1e400, a lone surrogate) are
			// ERROR runs (router's TestEngine_outputNotIJSONIsAnError):
			// left out, so that sessions never cool down.
			outs := []any{42, 42, 43, "forty-two", map[string]any{"a": 1}, 42.4, json.RawMessage(`1e308`), "\U0001F600"}
			return &router.Result{Output: outs[n%uint32(len(outs))], Confidence: 0.9}, nil
		case router.KindFactcheck:
			v := []router.Verdict{router.VerdictTrue, router.VerdictTrue, router.VerdictFalse}[n%3]
			return &router.Result{Verdict: v, Confidence: 0.8, Reasons: []string{"split"}}, nil
		}
		v := []router.Verdict{router.VerdictValid, router.VerdictValid, router.VerdictInvalid, router.VerdictRetry, router.VerdictNeedsSpec}[n%5]
		return &router.Result{Verdict: v, Confidence: 0.8, Reasons: []string{"split"}}, nil
	})
}

// FuzzEngineTrustStruct builds each trust envelope (or feedback report)
// from the fuzzer's bytes with fuzzjson.Generator over the members of
// docs/INTERFACE.md section 9, so that every input is valid JSON and
// most reach the tiers, over an engine whose sessions disagree now and
// then; the answer is checked as FuzzEngineTrust checks it.
func FuzzEngineTrustStruct(f *testing.F) {
	paths := []string{trust.CallPath, "/api/v4/trial/trust", "/api/v4/x402/trust", trust.FeedbackPath}
	for i := range paths {
		f.Add(uint8(i), []byte{})
		f.Add(uint8(i), []byte(strings.Repeat("\x01", 64)))
		f.Add(uint8(i), []byte(strings.Repeat("\x02\x01\x00", 40)))
		f.Add(uint8(i), []byte(strings.Repeat("\x01\x02", 40)))
	}
	var ss []router.Session
	for i := 1; i <= 5; i++ {
		ss = append(ss, router.Session{ID: router.SessionID(i), Worker: splitTrustWorker(i), Pool: fmt.Sprint("pool-", i%3)})
	}
	h, _ := engineTrustHandlerOver(f, ss)
	f.Fuzz(func(t *testing.T, route uint8, data []byte) {
		path := paths[int(route)%len(paths)]
		vocab := genTrustBody
		if path == trust.FeedbackPath {
			vocab = genFeedback
			if len(data) > 0 && data[0]%2 == 1 {
				// Report on a call just made: its trace id and receipt id.
				vocab = feedbackOnACall(t, h, data[0]%4 == 1)
			}
		}
		g := fuzzjson.New(data)
		body := []byte(g.Object(vocab))
		r := httptest.NewRequest(http.MethodPost, path, strings.NewReader(string(body)))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if testing.Verbose() {
			t.Logf("%s %s -> %d %.300s", path, body, w.Code, w.Body)
		}
		fuzzjson.CheckAnswer(t, w, path, body)
	})
}

// feedbackOnACall makes one trust call (a delegation or an adaptive
// validation) with a receipt and returns the feedback vocabulary naming
// its trace id and receipt id.
func feedbackOnACall(t *testing.T, h http.Handler, delegation bool) fuzzjson.Vocabulary {
	body := `{"mode":"validation","policy":"adaptive","task":{"claimed_result":"42"},"receipt":{"mode":"inline","include":{"consensus_snapshot":true,"router_trace_refs":true}}}`
	if delegation {
		body = `{"mode":"delegation","policy":"safe","task":{"input":"x"},"receipt":{"mode":"detached","include":{"consensus_snapshot":true,"router_trace_refs":true}}}`
	}
	r := httptest.NewRequest(http.MethodPost, trust.CallPath, strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Authorization", "Bearer k")
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	var resp struct {
		TraceID string `json:"trace_id"`
		Receipt *struct {
			ReceiptID string `json:"receipt_id"`
		} `json:"receipt"`
		ReceiptID string `json:"receipt_id"`
	}
	if w.Code != http.StatusOK || json.Unmarshal(w.Body.Bytes(), &resp) != nil {
		return genFeedback // no call to report on: the usual ids
	}
	rid := resp.ReceiptID
	if resp.Receipt != nil {
		rid = resp.Receipt.ReceiptID
	}
	return fuzzjson.Vocabulary{
		"trace_id": []string{strconv.Quote(resp.TraceID)}, "receipt_id": []string{strconv.Quote(rid)},
		"right": []string{`true`, `false`}, "verdict": []string{`"VALID"`, `"INVALID"`},
	}
}
