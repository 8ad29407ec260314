package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// kind is one kind of call of the mix.
type kind string

// The kinds of call.
const (
	validateV2 kind = "validate_v2" // POST /api/v2/validate on one session
	validateV3 kind = "validate_v3" // POST /api/v3/validate with 3 replicas
	delegateV3 kind = "delegate_v3" // POST /api/v3/delegate with 3 replicas
	trustCall  kind = "trust"       // POST /api/v4/trust, safe tier, inline signed receipt
	trialV2    kind = "trial_v2"    // POST /api/v2/trial/validate: rate limited on purpose
)

func kindNames() []string {
	return []string{string(validateV2), string(validateV3), string(delegateV3), string(trustCall), string(trialV2)}
}

// honestSessions are the demo server's sessions that answer at once and
// truly (session 2 is slow, session 5 sometimes wrong); version 2 calls
// name them in turn.
var honestSessions = [...]router.SessionID{1, 3, 4, 6}

// call is one call of the load: its number, id, kind and claim.
type call struct {
	n    int
	id   string
	kind kind
	a, b int  // the claim is "a * b = c"
	true bool // whether c is a * b
}

// newCall draws call n of the sequence fixed by seed.
func newCall(seed uint64, prefix string, n int, mix []weighted) call {
	rng := rand.New(rand.NewPCG(seed, uint64(n)))
	total := 0
	for _, w := range mix {
		total += w.weight
	}
	pick, k := rng.IntN(total), mix[0].kind
	for _, w := range mix {
		if pick < w.weight {
			k = w.kind
			break
		}
		pick -= w.weight
	}
	return call{n: n, id: fmt.Sprintf("%s-%d", prefix, n), kind: k, a: 2 + rng.IntN(998), b: 2 + rng.IntN(998), true: rng.IntN(4) != 0}
}

func (c call) claim() string {
	product := c.a * c.b
	if !c.true {
		product++
	}
	return fmt.Sprintf("%d * %d = %d", c.a, c.b, product)
}

func (c call) metadata() map[string]any { return map[string]any{"call_id": c.id} }

// do makes the call and returns how many worker executions its answer
// reports: 1 for version 2, one per replica run for version 3, the
// replicas spent for a trust call.
func (l *loader) do(ctx context.Context, c call) (int64, error) {
	claim := router.Claim{Type: "tool_output", Output: mustJSON(c.claim())}
	switch c.kind {
	case validateV2, trialV2:
		req := &router.ValidateV2Request{
			SessionID:    honestSessions[c.n%len(honestSessions)],
			ValidateTask: router.ValidateTask{RequestID: c.id, Claim: claim, Metadata: c.metadata()},
		}
		client := l.router
		if c.kind == trialV2 {
			ctx, client = router.WithVariant(ctx, router.VariantTrial), l.trial
		}
		if _, err := client.ValidateV2(ctx, req); err != nil {
			return 0, err
		}
		return 1, nil
	case validateV3:
		resp, err := l.router.ValidateV3(ctx, &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{RequestID: c.id, Claim: claim, Metadata: c.metadata()},
			Consensus:    router.ConsensusRequest{Replicas: 3},
		})
		if err != nil {
			return 0, err
		}
		return int64(len(resp.Evidence.Runs)), nil
	case delegateV3:
		resp, err := l.router.DelegateV3(ctx, &router.DelegateV3Request{
			DelegateTask: router.DelegateTask{
				Objective: fmt.Sprintf("what is %d * %d?", c.a, c.b),
				Input:     router.NewStringInput(fmt.Sprintf("%d * %d", c.a, c.b)),
				Metadata:  c.metadata(),
			},
			Consensus: router.ConsensusRequest{Replicas: 3},
		})
		if err != nil {
			return 0, err
		}
		return int64(len(resp.Evidence.Runs)), nil
	case trustCall:
		resp, err := l.trust.Call(ctx, &trust.Request{
			Mode:     trust.ModeValidation,
			Policy:   trust.PolicySafe,
			Task:     trust.Task{Type: "tool_output", Input: router.NewStringInput(fmt.Sprintf("%d * %d", c.a, c.b)), ClaimedResult: mustJSON(c.claim())},
			Metadata: c.metadata(),
			Receipt: receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{
				InputHash: true, OutputHash: true, ConsensusSnapshot: true, PolicySnapshot: true,
			}},
		})
		if err != nil {
			return 0, err
		}
		if len(resp.Receipt) == 0 {
			return int64(resp.Evidence.Redundancy), errNoReceipt
		}
		return int64(resp.Evidence.Redundancy), nil
	}
	return 0, fmt.Errorf("unknown kind %q", c.kind)
}

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only strings are encoded
	}
	return b
}
