package trust_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

func TestScratch_crossServer(t *testing.T) {
	for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeDelegation, trust.ModeArbitration} {
		for _, policy := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
			for _, order := range [][2]string{{"A trace", "B receipt"}, {"B receipt", "A trace"}, {"A receipt", "B receipt"}} {
				t.Run(fmt.Sprint(mode, policy, order), func(t *testing.T) {
					store := new(reputation.Memory)
					pub, priv, _ := ed25519.GenerateKey(nil)
					signer, _ := receipt.NewEd25519Signer(priv)
					receipts := new(receipt.MemStore)
					var servers []*trust.Service
					for range 2 {
						book, _ := reputation.New(store, reputation.Options{})
						workers := []router.Worker{honest(0.9), honest(0.8), verdictOf(router.VerdictInvalid), honest(0.7), honest(0.95)}
						e, err := router.NewEngine(routertest.Sessions(1, 5, workers...), router.WithReputation(book))
						if err != nil {
							t.Fatal(err)
						}
						s, err := trust.New(e, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: receipts}), trust.WithoutExams())
						if err != nil {
							t.Fatal(err)
						}
						servers = append(servers, s)
					}
					_ = pub
					req := request(mode, policy)
					req.Receipt = receipt.Inline()
					alice := trust.WithCaller(context.Background(), "key:alice")
					resp, err := servers[0].Call(alice, req)
					if err != nil {
						t.Fatal(err)
					}
					r, err := receipt.Parse(resp.Receipt)
					if err != nil {
						t.Fatal(err)
					}
					keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}, {Session: 4}, {Session: 5}}
					var got [][]reputation.Record
					for _, o := range order {
						s := servers[0]
						if o[0] == 'B' {
							s = servers[1]
						}
						id := resp.TraceID
						if o[2:] == "receipt" {
							id = r.ReceiptID
						}
						if err := s.Feedback(alice, id, false); err != nil {
							t.Fatalf("%s: %v", o, err)
						}
						got = append(got, reputationtest.Load(t, store, keys...))
					}
					if diff := cmp.Diff(got[0], got[1]); diff != "" {
						t.Errorf("counted twice:\n%s", diff)
					}
					bob := trust.WithCaller(context.Background(), "key:bob")
					if err := servers[1].Feedback(bob, r.ReceiptID, true); err == nil {
						t.Errorf("bob reported alice's receipt")
					}
				})
			}
		}
	}
}
