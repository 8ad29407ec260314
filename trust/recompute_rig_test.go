package trust_test

// The rig of the recomputation tests: a trust service over an in-process
// router.Engine whose sessions are fake workers with known answers, served
// by trust.NewHandler over loopback HTTP. Each test posts raw JSON requests
// and recomputes the response's figures from its body alone with the
// formulas of docs/INTERFACE.md (6.4, 6.5, 6.6, 9.2, 9.3, 9.4, 10.3),
// implemented here independently of the library where they can be.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// fakeSession is what one session answers, whatever it is asked.
type fakeSession struct {
	verdict router.Verdict // a validation's or arbitration's answer
	text    string         // a text delegation's output
	num     any            // a numeric delegation's output
	fail    bool           // ERROR on every job
	hang    bool           // never answers: TIMEOUT unless cancelled first
	delay   time.Duration  // answers after delay, or sooner if cancelled
	stub    bool           // ignores cancellation: sleeps delay, then answers
}

// String names the behaviour, for failure messages.
func (b fakeSession) String() string {
	switch {
	case b.fail:
		return "ERROR"
	case b.hang:
		return "HANG"
	case b.stub:
		return fmt.Sprintf("%s/%s/%v/stub%v", b.verdict, b.text, b.num, b.delay)
	}
	return fmt.Sprintf("%s/%s/%v/%v", b.verdict, b.text, b.num, b.delay)
}

// fakeConfidence is the confidence every answer of a fake session reports.
const fakeConfidence = 0.7

// errFakeSession is what a failing fake session answers.
var errFakeSession = errors.New("fake session fails")

// worker is the router.Worker that behaves as b. Every answer reports one
// prompt token and a cost of 1, so a response's usage counts the runs that
// answered.
func (b fakeSession) worker() router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if b.hang {
			<-ctx.Done()
			return nil, context.Cause(ctx)
		}
		if b.stub {
			time.Sleep(b.delay)
		} else if b.delay > 0 {
			t := time.NewTimer(b.delay)
			defer t.Stop()
			select {
			case <-t.C:
			case <-ctx.Done():
				return nil, context.Cause(ctx)
			}
		}
		if b.fail {
			return nil, errFakeSession
		}
		u := &router.Usage{PromptTokens: 1, CompletionTokens: 1, Cost: 1}
		if job.Kind == router.KindDelegate {
			s, _ := job.Input.String()
			if strings.HasPrefix(s, "num:") {
				return &router.Result{Output: b.num, Confidence: fakeConfidence, Usage: u}, nil
			}
			return &router.Result{Output: b.text, Confidence: fakeConfidence, Usage: u}, nil
		}
		return &router.Result{Verdict: b.verdict, Confidence: fakeConfidence, Reasons: []string{"says " + string(b.verdict)}, Usage: u}, nil
	})
}

// recomputeRig is a signing trust service over an engine of fake sessions
// (session i+1 behaves as the i-th), served over loopback HTTP with every
// call paid in escrow.
type recomputeRig struct {
	t          *testing.T
	beh        map[router.SessionID]fakeSession
	svc        *trust.Service
	srv        *httptest.Server
	verifier   *receipt.Verifier
	repOn      bool    // the service keeps reputation
	escalation float64 // the service's escalation threshold (0: none): adaptive may answer a lone run
}

// newRecomputeRig starts a rig over behs, with reputation on or off, the
// engine options eopts (after a 250 ms replica timeout) and the service
// options opts (after a signing key).
func newRecomputeRig(t *testing.T, behs []fakeSession, repOn bool, eopts []router.EngineOption, opts ...trust.Option) *recomputeRig {
	t.Helper()
	beh := map[router.SessionID]fakeSession{}
	ss := make([]router.Session, len(behs))
	for i, b := range behs {
		id := router.SessionID(i + 1)
		beh[id] = b
		ss[i] = router.Session{ID: id, Worker: b.worker(), Pool: fmt.Sprintf("pool-%d", i%2)}
	}
	eopts = append([]router.EngineOption{router.WithReplicaTimeout(250 * time.Millisecond), router.WithStopGrace(50 * time.Millisecond)}, eopts...)
	e, err := router.NewEngine(ss, eopts...)
	if err != nil {
		t.Fatal(err)
	}
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	opts = append([]trust.Option{trust.WithSigningKey(priv)}, opts...)
	if !repOn {
		opts = append(opts, trust.WithoutReputation())
	}
	s, err := trust.New(e, opts...)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipt.NewEd25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	return &recomputeRig{t: t, beh: beh, svc: s, srv: newServer(t, escrowed{s}), verifier: v, repOn: repOn}
}

// recomputeTerms are the escrow terms of every rig call: 1000 a run of a
// hold of 5000.
var recomputeTerms = trust.EscrowTerms{Scheme: "auth-capture", Network: "eip155:84532", Asset: "0xabc", ID: "0x01", Held: 5000, PerRun: 1000}

// escrowed is a trust.Caller that pays every call in escrow on
// recomputeTerms.
type escrowed struct{ s *trust.Service }

func (c escrowed) Call(ctx context.Context, req *trust.Request) (*trust.Response, error) {
	return c.s.Call(trust.WithEscrow(ctx, recomputeTerms), req)
}

// recomputeCall is one request of the rig: its JSON body, and the task's
// input as the receipt hashes it.
type recomputeCall struct {
	mode, policy    string
	numeric, judged bool
	body            []byte
	input           json.RawMessage
}

// recomputeRequest builds a request of the mode and policy, a numeric
// delegation (task.answer "number") when numeric, a judged one when judged,
// asking for an inline receipt with every include flag.
func recomputeRequest(mode, policy string, numeric, judged bool) recomputeCall {
	req := map[string]any{"mode": mode, "policy": policy}
	if judged {
		req["delegation"] = map[string]any{"agreement": "judged"}
	}
	task := map[string]any{"type": "qa"}
	input := "2+2"
	switch mode {
	case "delegation":
		input = "text: name the colour"
		if numeric {
			input = "num: how many"
			task["answer"] = "number"
		}
	case "arbitration":
		task["claimed_result"] = "4"
		task["dispute_context"] = map[string]any{"buyer": "wrong"}
	default:
		task["claimed_result"] = "4"
	}
	task["input"] = input
	req["task"] = task
	req["receipt"] = map[string]any{"mode": "inline", "include": map[string]bool{
		"consensus_snapshot": true, "policy_snapshot": true, "input_hash": true, "output_hash": true, "router_trace_refs": true}}
	body, _ := json.Marshal(req)
	in, _ := json.Marshal(input)
	return recomputeCall{mode: mode, policy: policy, numeric: numeric, judged: judged, body: body, input: in}
}

// post sends c to POST /api/v4/trust and returns the raw body, the decoded
// response (nil unless the status is 200) and the HTTP status.
func (r *recomputeRig) post(c recomputeCall) ([]byte, *trust.Response, int) {
	r.t.Helper()
	hreq, err := http.NewRequest(http.MethodPost, r.srv.URL+"/api/v4/trust", bytes.NewReader(c.body))
	if err != nil {
		r.t.Fatal(err)
	}
	hreq.Header.Set("Authorization", "Bearer "+testKey)
	hreq.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(hreq)
	if err != nil {
		r.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		r.t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK {
		return raw, nil, res.StatusCode
	}
	var resp trust.Response
	if err := json.Unmarshal(raw, &resp); err != nil {
		r.t.Fatalf("decode: %v: %s", err, raw)
	}
	return raw, &resp, res.StatusCode
}

// mustPost is post for a call that must answer 200.
func (r *recomputeRig) mustPost(c recomputeCall) ([]byte, *trust.Response) {
	r.t.Helper()
	raw, resp, code := r.post(c)
	if resp == nil {
		r.t.Fatalf("HTTP %d: %s", code, raw)
	}
	return raw, resp
}

// posteriorExact is 6.4's consensus.Posterior(a, d), Σ_{k≤a} C(a+d+1, k) /
// 2^(a+d+1), in big rationals.
func posteriorExact(a, d int) float64 {
	n := int64(a + d + 1)
	sum := new(big.Int)
	for k := int64(0); k <= int64(a); k++ {
		sum.Add(sum, new(big.Int).Binomial(n, k))
	}
	f, _ := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n))).Float64()
	return f
}

// readCalibration is 6.5 step 3 and 9.2's "held", written out: with no point
// the conservative number; held, the conservative number at most the first
// point's rate; else the uncalibrated number read on the points (the line
// between the two around it, shifted by rate − score beyond them), clamped
// to [0, 1].
func readCalibration(b *reputation.Basis) float64 {
	if len(b.Points) == 0 {
		return b.Conservative
	}
	if b.Basis == "held" {
		return math.Min(math.Max(b.Conservative, 0), math.Min(b.Points[0].Rate, 1))
	}
	x, p := b.Uncalibrated, b.Points
	var y float64
	switch n := len(p); {
	case n == 1 || x <= p[0].Score:
		y = x + p[0].Rate - p[0].Score
	case x >= p[n-1].Score:
		y = x + p[n-1].Rate - p[n-1].Score
	default:
		i := 1
		for p[i].Score < x {
			i++
		}
		lo, hi := p[i-1], p[i]
		y = lo.Rate
		if hi.Score > lo.Score {
			y += (x - lo.Score) * (hi.Rate - lo.Rate) / (hi.Score - lo.Score)
		}
	}
	return math.Min(math.Max(y, 0), 1)
}

// approxEqual reports whether two figures agree to 1e-9.
func approxEqual(a, b float64) bool { return math.Abs(a-b) <= 1e-9 }

// canonicalSHA256 is a receipt's hash of a JSON value: "sha256:" and the
// hex SHA-256 of its compact form (the canonical form of the simple values
// these tests hash).
func canonicalSHA256(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "bad:" + err.Error()
	}
	sum := sha256.Sum256(buf.Bytes())
	return "sha256:" + hex.EncodeToString(sum[:])
}

// numberOf is the number a fake session's numeric output holds, as the
// service reads it, and whether it holds one.
func numberOf(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case string:
		f, err := consensus.ParseNumber(json.RawMessage(fmt.Sprintf("%q", x)))
		return f, err == nil
	}
	return 0, false
}

// resultKey is the group key of a response's result: the number, or the
// text.
func resultKey(res json.RawMessage, numeric bool) string {
	if numeric {
		var f float64
		if json.Unmarshal(res, &f) == nil {
			return fmt.Sprint(f)
		}
		return "?"
	}
	var s string
	_ = json.Unmarshal(res, &s)
	return s
}

// noVotes counts the runs whose disagreement reason begins "no vote:": the
// answers that hold no number, which answered but cast no vote (9.2).
func noVotes(ev trust.Evidence) int {
	n := 0
	for _, d := range ev.Disagreements {
		if strings.HasPrefix(d.Reason, "no vote:") {
			n++
		}
	}
	return n
}

// withoutReceipt is a response body without its receipt, cut to 1800
// bytes, for failure messages.
func withoutReceipt(raw []byte) string {
	var m map[string]any
	_ = json.Unmarshal(raw, &m)
	delete(m, "receipt")
	b, _ := json.Marshal(m)
	if len(b) > 1800 {
		b = b[:1800]
	}
	return string(b)
}

// randomSessions draws n fake sessions: mostly VALID, some INVALID, a few
// NEEDS_SPEC and more RETRY; texts mostly red; numbers mostly 42 in several
// spellings, some off by one or no number; and some that fail, hang, answer
// slowly or answer after a cancellation.
func randomSessions(rng *rand.Rand, n int) []fakeSession {
	behs := make([]fakeSession, n)
	texts := []string{"red", "red", "red", "blue", "green"}
	nums := []any{42, 42, "42", 42.0, 43, 41, "n/a"}
	for i := range behs {
		b := fakeSession{verdict: router.VerdictValid, text: texts[rng.IntN(len(texts))], num: nums[rng.IntN(len(nums))]}
		switch x := rng.Float64(); {
		case x < 0.3:
			b.verdict = router.VerdictInvalid
		case x < 0.34:
			b.verdict = router.VerdictNeedsSpec
		case x < 0.42:
			b.verdict = router.VerdictRetry
		}
		switch x := rng.Float64(); {
		case x < 0.1:
			b.fail = true
		case x < 0.17:
			b.hang = true
		case x < 0.4:
			b.delay = time.Duration(20+rng.IntN(60)) * time.Millisecond
		case x < 0.5:
			b.stub, b.delay = true, time.Duration(5+rng.IntN(35))*time.Millisecond
		}
		behs[i] = b
	}
	return behs
}
