package reputation_test

import (
	"context"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// newAgreementBook returns a Book over store that also learns
// reliabilities from agreement (Options.LearnFromAgreement).
func newAgreementBook(t *testing.T, store reputation.Store) *reputation.Book {
	t.Helper()
	b, err := reputation.New(store, reputation.Options{LearnFromAgreement: true})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// simulate runs calls of binary claims on sessions of the given error
// rates, n voters each (the first n of a rotation), learning from each.
// With copying set, session 2 casts session 1's vote whenever both run.
func simulate(t *testing.T, b *reputation.Book, r *rand.Rand, errs []float64, calls, n int, copying bool) {
	t.Helper()
	ctx := context.Background()
	ids := make([]int64, len(errs))
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	for c := range calls {
		votes := make([]consensus.Vote, n)
		wrongs := make([]bool, len(errs))
		for i, e := range errs {
			wrongs[i] = r.Float64() < e
		}
		if copying {
			wrongs[1] = wrongs[0]
		}
		for j := range n {
			i := (c + j) % len(errs)
			wrong := wrongs[i]
			label := consensus.LabelValid
			if wrong {
				label = consensus.LabelInvalid
			}
			votes[j] = consensus.Vote{Session: ids[i], Label: label}
		}
		rel := reliabilities(t, b, ids...)
		if err := b.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBookLearnsNothingFromOneVote(t *testing.T) {
	store := new(reputation.Memory)
	b := newBook(t, store)
	votes := []consensus.Vote{{Session: 1, Label: consensus.LabelValid}, {Session: 2, Label: consensus.LabelError}, {Session: 3, Label: consensus.LabelCancelled}}
	if err := b.Learn(context.Background(), scope, votes, consensus.Policy{}, reliabilities(t, b, 1, 2, 3)); err != nil {
		t.Fatal(err)
	}
	recs, _ := store.Load(context.Background(), []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}})
	for i, r := range recs {
		if r != (reputation.Record{}) {
			t.Errorf("session %d learned %+v from a call with one vote cast", i+1, r)
		}
	}
}

// TestBookLearnsReliabilities: learning from agreement, on independent
// sessions, the book ranks the sessions as they are and lands near their
// rates, and measures no correlation.
func TestBookLearnsReliabilities(t *testing.T) {
	b := newAgreementBook(t, nil)
	errs := []float64{0.06, 0.1, 0.15, 0.2, 0.25}
	simulate(t, b, rand.New(rand.NewPCG(1, 2)), errs, 3000, 3, false)
	rel := reliabilities(t, b, 1, 2, 3, 4, 5)
	for i, e := range errs {
		got := rel.Sessions[int64(i+1)]
		if math.Abs(got-(1-e)) > 0.05 {
			t.Errorf("session %d (right %v of the time) reads %v", i+1, 1-e, got)
		}
		if i > 0 && got >= rel.Sessions[int64(i)] {
			t.Errorf("session %d reads %v, not below session %d's %v", i+1, got, i, rel.Sessions[int64(i)])
		}
	}
	if rel.Correlation > 0.1 {
		t.Errorf("independent sessions read correlation %v, want about 0", rel.Correlation)
	}
}

// TestBookMeasuresCorrelation: a panel in which one session copies
// another's votes reads a correlation well above a panel of independent
// sessions.
func TestBookMeasuresCorrelation(t *testing.T) {
	errs := []float64{0.2, 0.2, 0.05, 0.05, 0.05}
	independent, copying := newAgreementBook(t, nil), newAgreementBook(t, nil)
	simulate(t, independent, rand.New(rand.NewPCG(3, 4)), errs, 3000, 5, false)
	simulate(t, copying, rand.New(rand.NewPCG(3, 4)), errs, 3000, 5, true)
	lo, hi := reliabilities(t, independent, 1).Correlation, reliabilities(t, copying, 1).Correlation
	if lo > 0.05 || hi < 0.08 {
		t.Errorf("correlation %v for independent sessions, %v when one copies another; want at most 0.05 and at least 0.08", lo, hi)
	}
	if testing.Verbose() {
		t.Logf("correlation: independent %v, copying %v", lo, hi)
	}
}

// TestBookConcurrentLearning: many calls updating one session's record
// at once lose nothing.
func TestBookConcurrentLearning(t *testing.T) {
	store := new(reputation.Memory)
	b := newAgreementBook(t, store)
	ctx := context.Background()
	const calls = 200
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			votes := []consensus.Vote{{Session: 1, Label: consensus.LabelValid}, {Session: int64(2 + i%3), Label: consensus.LabelValid}}
			rel, err := b.Reliabilities(ctx, scope, []int64{1, int64(2 + i%3)})
			if err != nil {
				t.Error(err)
				return
			}
			if err := b.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	recs, _ := store.Load(ctx, []reputation.Key{{Session: 1}})
	if got := recs[0].Right + recs[0].Wrong; math.Abs(got-calls) > 1e-9 {
		t.Errorf("session 1 holds %v votes of evidence after %d calls, want %d", got, calls, calls)
	}
}

// TestBookCountsAVoteOnce: Learn adds a vote at the session's, the
// operation's and the kind's records; reading any of those scopes counts it
// once, against the Prior worth five votes.
func TestBookCountsAVoteOnce(t *testing.T) {
	b := newAgreementBook(t, nil)
	ctx := context.Background()
	narrow := reputation.Scope{Operation: "validate", Kind: "classification"}
	votes := []consensus.Vote{
		{Session: 1, Label: "VALID"}, {Session: 2, Label: "INVALID"}, {Session: 3, Label: "INVALID"},
		{Session: 4, Label: "VALID"}, {Session: 5, Label: "INVALID"},
	}
	rel, err := b.Reliabilities(ctx, narrow, []int64{1, 2, 3, 4, 5})
	if err != nil {
		t.Fatal(err)
	}
	beliefs, _, err := consensus.Beliefs(votes, consensus.Policy{}, rel)
	if err != nil {
		t.Fatal(err)
	}
	right := beliefs[0] // what session 1's vote was credited with
	if err := b.Learn(ctx, narrow, votes, consensus.Policy{}, rel); err != nil {
		t.Fatal(err)
	}
	want := (4 + right) / (5 + 1)
	for _, sc := range []reputation.Scope{{}, {Operation: "validate"}, narrow} {
		got, err := b.Reliabilities(ctx, sc, []int64{1})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got.Of(1)-want) > 1e-12 {
			t.Errorf("scope %+v: session 1 reads %.4f, want (4+%.3f)/6 = %.4f", sc, got.Of(1), right, want)
		}
	}
}

// TestBook_Learn_uncastVotesAndManyVoters: the votes Learn is given that
// were not cast (cancelled, failed, pending) teach nothing, so that a
// call learned with them leaves every record as the same call without
// them does, and a call of more voters than a call usually has (twelve
// votes, nine cast) is learned whole.
func TestBook_Learn_uncastVotesAndManyVoters(t *testing.T) {
	ctx := context.Background()
	var all, cast []consensus.Vote
	var ids []int64
	for i := range 12 {
		id := int64(i + 1)
		ids = append(ids, id)
		v := consensus.Vote{Session: id, Label: consensus.LabelValid, Confidence: 0.5 + float64(i)/40}
		switch i {
		case 2:
			v.Label = consensus.LabelCancelled
		case 5:
			v.Label = consensus.LabelTimeout
		case 8:
			v.Label = ""
		case 3, 7, 11:
			v.Label = consensus.LabelInvalid
		}
		all = append(all, v)
		if v.Label == consensus.LabelValid || v.Label == consensus.LabelInvalid {
			cast = append(cast, v)
		}
	}
	evidence := func(votes []consensus.Vote) map[int64]reputation.Record {
		b := newAgreementBook(t, nil)
		rel := reliabilities(t, b, ids...)
		for range 3 {
			if err := b.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
				t.Fatal(err)
			}
		}
		_, counts, err := b.Evidence(ctx, scope, ids)
		if err != nil {
			t.Fatal(err)
		}
		return counts
	}
	withUncast, castOnly := evidence(all), evidence(cast)
	if diff := cmp.Diff(castOnly, withUncast); diff != "" {
		t.Errorf("records after votes not cast were learned too (-cast only +all):\n%s", diff)
	}
	prior := reputation.DefaultPrior().Right + reputation.DefaultPrior().Wrong
	for _, v := range cast {
		if c := castOnly[v.Session]; c.Right+c.Wrong <= prior {
			t.Errorf("session %d voted and learned nothing: %+v", v.Session, c)
		}
	}
	for _, id := range []int64{3, 6, 9} {
		if c := castOnly[id]; c.Right+c.Wrong != prior {
			t.Errorf("session %d did not vote and holds evidence: %+v", id, c)
		}
	}
}

// TestBook_Learn_cliqueOfLookAlikes: sessions 1 and 2 cast one vote
// between them, right 45% of the time, beside session 3, right 72% of
// the time, and two sessions right 57% and 63% of the time. Learning
// from agreement with no outcome makes the look-alikes more reliable
// than session 3; the
// default Book learns nothing about reliabilities from agreement, and
// from outcomes reported on 5% of the calls ranks session 3 first and
// the look-alikes last.
func TestBook_Learn_cliqueOfLookAlikes(t *testing.T) {
	ctx := context.Background()
	rights := []float64{0.45, 0.45, 0.72, 0.57, 0.63}
	ids := []int64{1, 2, 3, 4, 5}
	run := func(b *reputation.Book, report bool) consensus.Reliabilities {
		r := rand.New(rand.NewPCG(5, 6))
		for c := range 2000 {
			votes := make([]consensus.Vote, len(ids))
			var ballots []reputation.Ballot
			for i, id := range ids {
				right := r.Float64() < rights[i]
				if i == 1 {
					right = votes[0].Label == consensus.LabelValid
				}
				votes[i] = consensus.Vote{Session: id, Label: consensus.LabelInvalid}
				if right {
					votes[i].Label = consensus.LabelValid // the truth is VALID
				}
				ballots = append(ballots, reputation.Ballot{Session: id, Backed: right})
			}
			if err := b.Learn(ctx, scope, votes, consensus.Policy{}, reliabilities(t, b, ids...)); err != nil {
				t.Fatal(err)
			}
			if report && c%20 == 0 { // the host reports 5% of outcomes: here, that VALID was right
				if err := b.Feedback(ctx, scope, ballots, true); err != nil {
					t.Fatal(err)
				}
			}
		}
		return reliabilities(t, b, ids...)
	}
	agreement := run(newAgreementBook(t, nil), false)
	if agreement.Of(1) <= agreement.Of(3) {
		t.Errorf("learning from agreement: look-alike reads %.3f, not above session 3's %.3f (the case this test guards against no longer arises)", agreement.Of(1), agreement.Of(3))
	}
	rel := run(newBook(t, nil), true)
	for _, id := range []int64{1, 2, 4, 5} {
		if rel.Of(3) <= rel.Of(id) {
			t.Errorf("outcomes: session 3 (right 72%%) reads %.3f, not above session %d's %.3f", rel.Of(3), id, rel.Of(id))
		}
	}
	for _, id := range []int64{1, 2} {
		for _, other := range []int64{3, 4, 5} {
			if rel.Of(id) >= rel.Of(other) {
				t.Errorf("outcomes: look-alike %d reads %.3f, not below session %d's %.3f", id, rel.Of(id), other, rel.Of(other))
			}
		}
	}

	// Agreement alone leaves every reliability at the Prior.
	b := newBook(t, nil)
	for range 200 {
		votes := []consensus.Vote{{Session: 1, Label: consensus.LabelValid}, {Session: 2, Label: consensus.LabelValid}, {Session: 3, Label: consensus.LabelInvalid}}
		if err := b.Learn(ctx, scope, votes, consensus.Policy{}, reliabilities(t, b, 1, 2, 3)); err != nil {
			t.Fatal(err)
		}
	}
	got := reliabilities(t, b, 1, 2, 3)
	want := map[int64]float64{1: reputation.DefaultPrior().Mean(), 2: reputation.DefaultPrior().Mean(), 3: reputation.DefaultPrior().Mean()}
	if diff := cmp.Diff(want, got.Sessions); diff != "" {
		t.Errorf("reliabilities after 200 calls of agreement and no outcome (-want +got):\n%s", diff)
	}
}
