package pgstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestReputationStore_reportOnceByReceiptOfReusedTrace: a caller's call
// on one server is reported by its trace id; the caller then reuses the
// trace id for a call on another server, of other sessions, and reports
// the first call again by its receipt there. The two servers share the
// book and the receipts in one database. The second report names the
// same call, and adds nothing: a call's outcome counts once, by either
// name, whatever the caller's later calls are named.
func TestReputationStore_reportOnceByReceiptOfReusedTrace(t *testing.T) {
	dbs := openDBs(t, 3)
	signer := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	valid := routertest.Verdict(router.VerdictValid)
	var servers []*trust.Service
	for i, pool := range [][]router.SessionID{{1, 2, 3}, {4, 5, 6}} {
		book, err := reputation.New(dbs[i].Reputation(), reputation.Options{})
		if err != nil {
			t.Fatal(err)
		}
		engine, err := router.NewEngine(routertest.Sessions(1, 6, valid, valid, valid, valid, valid, valid), router.WithReputation(book))
		if err != nil {
			t.Fatal(err)
		}
		svc, err := trust.New(engine, trust.WithSigningKey(signer), trust.WithReceiptStore(dbs[i].Receipts()),
			trust.WithSessionPool(pool...), trust.WithoutExams())
		if err != nil {
			t.Fatal(err)
		}
		servers = append(servers, svc)
	}
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	alice := router.WithTraceID(trust.WithCaller(context.Background(), "key:alice"), trace)
	req := &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe, Receipt: receipt.Inline(),
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Paris is in France."), ClaimedResult: json.RawMessage(`"Paris is French."`)}}
	resp, err := servers[0].Call(alice, req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	if err := servers[0].Feedback(alice, trace, false); err != nil {
		t.Fatal(err)
	}
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
	once := reputationtest.Load(t, dbs[2].Reputation(), keys...)
	if _, err := servers[1].Call(alice, req); err != nil { // the trace id reused
		t.Fatal(err)
	}
	if err := servers[1].Feedback(alice, r.ReceiptID, false); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(once, reputationtest.Load(t, dbs[2].Reputation(), keys...)); diff != "" {
		t.Errorf("records of the first call's sessions after its report was repeated by receipt (-once +again):\n%s", diff)
	}
}
