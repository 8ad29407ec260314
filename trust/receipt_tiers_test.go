package trust_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_receiptEveryTier: every tier issues a receipt with every
// optional member, and it verifies. Adaptive's pooled tally (counted by
// majority) launches 2 or 4 runs, which its snapshots record as they are.
func TestService_receiptEveryTier(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	V, I := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	for _, tc := range []struct {
		name    string
		policy  trust.Policy
		workers []router.Worker
		runs    int
	}{
		{"fast", trust.PolicyFast, []router.Worker{V, V, V, V, V}, 1},
		{"safe", trust.PolicySafe, []router.Worker{V, V, V, V, V}, 3},
		{"oracle", trust.PolicyOracle, []router.Worker{V, V, V, V, V}, 5},
		{"adaptive, two agree", trust.PolicyAdaptive, []router.Worker{V, V, V, V, V}, 2},
		{"adaptive, a split", trust.PolicyAdaptive, []router.Worker{V, I, V, V, V}, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := trust.New(newEngine(t, tc.workers...), trust.WithSigningKey(priv), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithoutReputation())
			if err != nil {
				t.Fatal(err)
			}
			resp, r := callInline(t, s, tc.policy, pub)
			if r.ConsensusSnapshot == nil || r.PolicySnapshot == nil {
				t.Fatalf("receipt without snapshots: %s", resp.Receipt)
			}
			if got := r.ConsensusSnapshot.Replicas; got != tc.runs || got != resp.Evidence.Launched || len(r.ConsensusSnapshot.Verdicts) != got {
				t.Errorf("consensus_snapshot.replicas %d with %d verdicts, evidence.launched %d; want %d of each",
					got, len(r.ConsensusSnapshot.Verdicts), resp.Evidence.Launched, tc.runs)
			}
		})
	}
}

// TestService_receiptPolicyStrategy: the policy snapshot names the
// strategy the votes were counted by, as the consensus snapshot does:
// weighted with reputation on (the default), majority without.
func TestService_receiptPolicyStrategy(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	V := routertest.Verdict(router.VerdictValid)
	for _, tc := range []struct {
		name   string
		policy trust.Policy
		opts   []trust.Option
		want   string
	}{
		{"safe, reputation on", trust.PolicySafe, nil, "weighted"},
		{"adaptive, reputation on", trust.PolicyAdaptive, nil, "weighted"},
		{"safe, reputation off", trust.PolicySafe, []trust.Option{trust.WithoutReputation()}, "majority"},
		{"adaptive, reputation off", trust.PolicyAdaptive, []trust.Option{trust.WithoutReputation()}, "majority"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := append([]trust.Option{trust.WithSigningKey(priv), trust.WithSessionPool(1, 2, 3, 4, 5)}, tc.opts...)
			s, err := trust.New(newEngine(t, V, V, V, V, V), opts...)
			if err != nil {
				t.Fatal(err)
			}
			resp, r := callInline(t, s, tc.policy, pub)
			if r.PolicySnapshot == nil || r.ConsensusSnapshot == nil {
				t.Fatalf("receipt without snapshots: %s", resp.Receipt)
			}
			if got := r.PolicySnapshot.Consensus.Strategy; got != tc.want || r.ConsensusSnapshot.Strategy != tc.want {
				t.Errorf("policy_snapshot strategy %q, consensus_snapshot strategy %q; want %q for both",
					got, r.ConsensusSnapshot.Strategy, tc.want)
			}
		})
	}
}

// callInline makes a validation under policy with an inline receipt, and
// returns the response and its receipt, verified under pub.
func callInline(t *testing.T, s *trust.Service, policy trust.Policy, pub ed25519.PublicKey) (*trust.Response, *receipt.Receipt) {
	t.Helper()
	req := request(trust.ModeValidation, policy)
	req.Receipt = receipt.Inline()
	resp, err := s.Call(context.Background(), req)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(pub))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	return resp, res.Receipt
}

// TestService_receiptAgreement: the receipt's decision.agreement states
// the final step's agreement and replicas and the runs spent in all, as
// the response's evidence does; decision.reasons keeps the same summary
// as its first line, as before the member existed.
func TestService_receiptAgreement(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	V, I := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	for _, tc := range []struct {
		name    string
		policy  trust.Policy
		workers []router.Worker
		want    receipt.Agreement
	}{
		{"safe, unanimous", trust.PolicySafe, []router.Worker{V, V, V, V, V}, receipt.Agreement{Share: 1, Replicas: 3, Spent: 3}},
		{"safe, a split", trust.PolicySafe, []router.Worker{V, I, V, V, V}, receipt.Agreement{Share: 2.0 / 3, Replicas: 3, Spent: 3}},
		{"adaptive, a split", trust.PolicyAdaptive, []router.Worker{V, I, V, V, V}, receipt.Agreement{Share: 0.75, Replicas: 4, Spent: 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := trust.New(newEngine(t, tc.workers...), trust.WithSigningKey(priv), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithoutReputation())
			if err != nil {
				t.Fatal(err)
			}
			resp, r := callInline(t, s, tc.policy, pub)
			got := r.Decision.Agreement
			if got == nil {
				t.Fatalf("decision without agreement: %s", resp.Receipt)
			}
			if math.Abs(got.Share-tc.want.Share) > 1e-9 || got.Replicas != tc.want.Replicas || got.Spent != tc.want.Spent {
				t.Errorf("decision.agreement %+v, want %+v", *got, tc.want)
			}
			if got.Share != resp.Evidence.Agreement || got.Spent != resp.Evidence.Redundancy {
				t.Errorf("decision.agreement %+v, evidence agreement %v redundancy %d: want the same", *got, resp.Evidence.Agreement, resp.Evidence.Redundancy)
			}
			want := fmt.Sprintf("agreement %.2f over %d replicas (%d spent in all)", got.Share, got.Replicas, got.Spent)
			if len(r.Decision.Reasons) == 0 || r.Decision.Reasons[0] != want {
				t.Errorf("decision.reasons %q, want %q first", r.Decision.Reasons, want)
			}
		})
	}
}
