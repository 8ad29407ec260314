package router_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"os"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
)

// offErrRates are the sessions of the seeded workload: session i+1 errs
// offErrRates[i] percent of the time.
var offErrRates = []uint32{6, 10, 15, 20, 25}

// offWorker answers VALID, or INVALID on the claims it errs on: a
// function of the session and the claim alone, so that the votes do not
// depend on the order in which replicas run.
func offWorker(rate uint32) router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		h := fnv.New32a()
		fmt.Fprintf(h, "%d/%s", job.SessionID, job.Claim.Output)
		v := router.VerdictValid
		if h.Sum32()%100 < rate {
			v = router.VerdictInvalid
		}
		return &router.Result{Verdict: v, Confidence: 0.5}, nil
	})
}

// offWorkload runs a seeded workload of version 3 validations (return_all,
// so that every replica votes whatever the timing) on e and returns each
// response as JSON, without task ids.
func offWorkload(t *testing.T, e *router.Engine) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	for i := range 300 {
		replicas := []int{1, 3, 5}[i%3]
		req := validateV3(replicas, router.DisagreeReturnAll)
		req.Claim.Output = json.RawMessage(fmt.Sprintf(`"claim %d"`, i))
		resp, err := e.ValidateV3(context.Background(), req)
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		for j := range resp.Evidence.Runs {
			resp.Evidence.Runs[j].TaskID = ""
		}
		raw, err := json.Marshal(resp)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, raw)
	}
	return out
}

// offEngine is the workload's engine, with opts.
func offEngine(t *testing.T, opts ...router.EngineOption) *router.Engine {
	t.Helper()
	var sessions []router.Session
	for i, r := range offErrRates {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: offWorker(r)})
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return newEngine(t, sessions, append(opts, router.WithEngineClock(func() time.Time { return clock }))...)
}

// TestEngine_reputationOff: with reputation off, the seeded workload gives
// the responses the engine gave before reputation existed, byte for byte
// (testdata/reputation_off.json.gz was written by this workload at the
// commit before it), but for the consensus block's list of agreeing
// replicas, which every engine now adds.
func TestEngine_reputationOff(t *testing.T) {
	f, err := os.Open("testdata/reputation_off.json.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var want []json.RawMessage
	if err := json.NewDecoder(zr).Decode(&want); err != nil {
		t.Fatal(err)
	}
	got := offWorkload(t, offEngine(t, router.WithReputation(nil)))
	if len(got) != len(want) {
		t.Fatalf("%d responses, want %d", len(got), len(want))
	}
	for i := range got {
		var resp router.ValidateV3Response
		if err := json.Unmarshal(got[i], &resp); err != nil {
			t.Fatal(err)
		}
		if resp.Consensus.Agreeing == nil && resp.Verdict != "" {
			t.Errorf("call %d: no agreeing replicas listed", i)
		}
		resp.Consensus.Agreeing = nil
		raw, _ := json.Marshal(resp)
		if !bytes.Equal(raw, want[i]) {
			t.Fatalf("call %d:\n got %s\nwant %s", i, raw, want[i])
		}
	}
}

// TestEngine_reputationOnDiffers: the same workload with reputation on
// (the default) learns, and so picks other sessions: the test above
// compares something that could differ.
func TestEngine_reputationOnDiffers(t *testing.T) {
	off := offWorkload(t, offEngine(t, router.WithReputation(nil)))
	on := offWorkload(t, offEngine(t))
	same := 0
	for i := range off {
		if bytes.Equal(off[i], on[i]) {
			same++
		}
	}
	if same == len(off) {
		t.Errorf("reputation on gave the same %d responses as off", same)
	}
}
