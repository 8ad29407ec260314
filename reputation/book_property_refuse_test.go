package reputation_test

import (
	"errors"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// Every method refuses a reserved scope, and a session that is not
// positive, with ErrInvalid, writing nothing.
func TestBookProperty_RefusedInputs(t *testing.T) {
	st := new(reputation.Memory)
	b, _ := reputation.New(st, reputation.Options{})
	universe := keyUniverse([]int64{0, 1, 2})
	before := loadAll(t, st, universe)
	good := reputation.Scope{Operation: "a"}
	votes := []consensus.Vote{{Session: 1, Label: consensus.LabelValid}, {Session: 2, Label: consensus.LabelInvalid}}
	for _, sc := range []reputation.Scope{{Operation: "any"}, {Operation: "a b"}, {Operation: "a", Kind: "lead x"}, {Kind: "x y"}} {
		calls := map[string]error{}
		_, calls["Reliabilities"] = b.Reliabilities(propertyCtx, sc, []int64{1})
		_, _, calls["Evidence"] = b.Evidence(propertyCtx, sc, []int64{1})
		_, _, calls["Leader"] = b.Leader(propertyCtx, sc, []int64{1})
		_, calls["Snapshot"] = b.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Sessions: []int64{1}})
		calls["Feedback"] = b.Feedback(propertyCtx, sc, []reputation.Ballot{{Session: 1, Backed: true}}, true)
		calls["Learn"] = b.Learn(propertyCtx, sc, votes, consensus.Policy{}, consensus.Reliabilities{})
		calls["Forget"] = b.Forget(propertyCtx, sc, 1)
		_, calls["Coincidence"] = b.Coincidence(propertyCtx, sc)
		_, calls["Calibrations"] = b.Calibrations(propertyCtx, sc, "t")
		_, _, calls["Calibrate"] = b.Calibrate(propertyCtx, sc, "t", 0.5, 0.5)
		l := reputation.NewLedger(4)
		l.Put("c", "id", sc, []reputation.Ballot{{Session: 1, Backed: true}})
		_, calls["Report"] = l.Report(propertyCtx, b, "c", "id", true)
		for m, err := range calls {
			if !errors.Is(err, reputation.ErrInvalid) {
				t.Errorf("%s(%+v): err %v, want ErrInvalid", m, sc, err)
			}
		}
	}
	calls := map[string]error{}
	calls["Feedback 0"] = b.Feedback(propertyCtx, good, []reputation.Ballot{{Session: 1, Backed: true}, {Session: 0, Backed: true}}, true)
	calls["Feedback -1"] = b.Feedback(propertyCtx, good, []reputation.Ballot{{Session: 1, Backed: true}, {Session: -1}}, true)
	calls["Learn 0"] = b.Learn(propertyCtx, good, append(votes, consensus.Vote{Session: 0, Label: consensus.LabelValid}), consensus.Policy{}, consensus.Reliabilities{})
	calls["Forget 0"] = b.Forget(propertyCtx, good, 1, 0)
	_, calls["Identify 0"] = b.Identify(propertyCtx, 0, "w")
	_, calls["Identify empty"] = b.Identify(propertyCtx, 1, "")
	l := reputation.NewLedger(4)
	l.Put("c", "id", good, []reputation.Ballot{{Session: 1, Backed: true}, {Session: 0}})
	_, calls["Report 0"] = l.Report(propertyCtx, b, "c", "id", true)
	for m, err := range calls {
		if !errors.Is(err, reputation.ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", m, err)
		}
	}
	after := loadAll(t, st, universe)
	for k, v := range after {
		if v != before[k] {
			t.Errorf("a refused call wrote %+v: %+v", k, v)
		}
	}
	// Fewer than two cast votes teach nothing; votes not cast of session 0
	// are allowed.
	if err := b.Learn(propertyCtx, good, []consensus.Vote{{Session: 1, Label: consensus.LabelValid, Confidence: 0.9}, {Session: 0, Label: consensus.LabelCancelled}, {Session: 2, Label: "TIMEOUT"}}, consensus.Policy{}, consensus.Reliabilities{}); err != nil {
		t.Errorf("Learn of one cast vote: %v", err)
	}
	for k, v := range loadAll(t, st, universe) {
		if v != before[k] {
			t.Errorf("Learn of one cast vote wrote %+v: %+v", k, v)
		}
	}
}
