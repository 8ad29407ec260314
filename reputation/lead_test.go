package reputation_test

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
)

func TestLead_PValue(t *testing.T) {
	for _, c := range []struct {
		won, lost float64
		want      float64
	}{
		{0, 0, 1},
		{0, 3, 1},
		{1, 0, 0.5},
		{4, 0, 1.0 / 16},
		{3, 0, 1.0 / 8},
		{6, 1, 8.0 / 128},    // P(X ≥ 6) of Bin(7, 1/2): (7+1)/128
		{3.6, 0.4, 1.0 / 16}, // counts scaled by a horizon are rounded
	} {
		l := reputation.Lead{Won: c.won, Lost: c.lost}
		if got := l.PValue(); got != c.want {
			t.Errorf("Lead{Won: %v, Lost: %v}.PValue() = %v, want %v", c.won, c.lost, got, c.want)
		}
	}
}

// TestLead_Beats checks Beats against the chance, integrated, that a
// share following Beta(Won+1, Lost+1) is above one half, and Rate
// against that distribution's mean.
func TestLead_Beats(t *testing.T) {
	above := func(a, b float64) float64 { // ∫ over (1/2, 1) of the density, by the midpoint rule
		const n = 20000
		var in, all float64
		for i := range n {
			x := (float64(i) + 0.5) / n
			f := math.Pow(x, a-1) * math.Pow(1-x, b-1)
			all += f
			if x > 0.5 {
				in += f
			}
		}
		return in / all
	}
	for _, c := range []struct{ won, lost float64 }{{0, 0}, {3, 0}, {4, 2}, {6, 1}, {2, 5}, {10, 4}} {
		l := reputation.Lead{Won: c.won, Lost: c.lost}
		if got, want := l.Beats(), above(c.won+1, c.lost+1); math.Abs(got-want) > 1e-6 {
			t.Errorf("Lead{Won: %v, Lost: %v}.Beats() = %v, want %v", c.won, c.lost, got, want)
		}
		if got, want := l.Rate(), (c.won+1)/(c.won+c.lost+2); got != want {
			t.Errorf("Lead{Won: %v, Lost: %v}.Rate() = %v, want %v", c.won, c.lost, got, want)
		}
	}
	if got := (reputation.Lead{Won: 2.6, Lost: 0.4}).Beats(); got != (reputation.Lead{Won: 3}).Beats() {
		t.Errorf("counts scaled by a horizon: Beats() = %v, want the rounded counts' %v", got, (reputation.Lead{Won: 3}).Beats())
	}
}

// leadScope is the scope of the leader tests.
var leadScope = reputation.Scope{Operation: "validate_v3", Kind: "classification"}

// leadBook returns a Book over a new Memory whose records lead at its
// lead level alone (a LeadMargin of 1, which no reliability clears), so
// that a record leads by its sign test at 1/8; TestBook_Leader_margin
// tests the margin.
func leadBook(t *testing.T) *reputation.Book {
	t.Helper()
	b, err := reputation.New(nil, reputation.Options{LeadMargin: 1})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// marginOf is session's reliability in scope on b less the highest of the
// other sessions', as Book.Reliabilities reads them.
func marginOf(t *testing.T, b *reputation.Book, scope reputation.Scope, sessions []int64, session int64) float64 {
	t.Helper()
	rel, err := b.Reliabilities(context.Background(), scope, sessions)
	if err != nil {
		t.Fatal(err)
	}
	m := math.Inf(1)
	for _, s := range sessions {
		if s != session {
			m = min(m, rel.Of(session)-rel.Of(s))
		}
	}
	return m
}

// TestBook_Leader reports outcomes on validations where session 3
// dissents, alone and rightly, from the two other votes, and checks that
// it leads only once its record is significant, and that dissents from
// open answers (no Opposed) and ballots that agreed with the others
// never make a leader.
func TestBook_Leader(t *testing.T) {
	ctx, b := context.Background(), leadBook(t)
	sessions := []int64{1, 2, 3}
	wrongDecision := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true}}
	openDissent := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 3}}
	for range 5 { // dissents from wrong open answers: not known right
		if err := b.Feedback(ctx, leadScope, openDissent, false); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if _, ok, err := b.Leader(ctx, leadScope, sessions); err != nil || ok {
			t.Fatalf("after %d wins: a leader (%v, %v); want none before three", i, ok, err)
		}
		if err := b.Feedback(ctx, leadScope, wrongDecision, false); err != nil {
			t.Fatal(err)
		}
	}
	l, ok, err := b.Leader(ctx, leadScope, sessions)
	if err != nil || !ok {
		t.Fatalf("after three wins: no leader (%v)", err)
	}
	want := reputation.Lead{Session: 3, Won: 3, Level: reputation.DefaultLeadLevel, Margin: marginOf(t, b, leadScope, sessions, 3)}
	if diff := cmp.Diff(want, l); diff != "" {
		t.Errorf("leader (-want +got):\n%s", diff)
	}
	if _, ok, _ := b.Leader(ctx, reputation.Scope{Operation: "validate_v3", Kind: "other"}, sessions); ok {
		t.Error("a leader in another scope")
	}
	// A loss on a right decision the leader dissented from ends the lead.
	rightDecision := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 3, Opposed: true}}
	if err := b.Feedback(ctx, leadScope, rightDecision, true); err != nil {
		t.Fatal(err)
	}
	if l, ok, _ := b.Leader(ctx, leadScope, sessions); ok {
		t.Errorf("after 3 wins and 1 loss: leader %+v; want none (p = 5/16)", l)
	}
}

// TestBook_Leader_level: a record of two wins and one loss leads at a
// LeadLevel of 1/2 (its p-value), where it has won more disagreements
// than it lost, and not at 1/8; at 1/2 one more loss, a tie, ends the
// lead.
func TestBook_Leader_level(t *testing.T) {
	ctx := context.Background()
	sessions := []int64{1, 2, 3}
	half, err := reputation.New(nil, reputation.Options{LeadLevel: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if got := half.Options().LeadLevel; got != 0.5 {
		t.Errorf("Options().LeadLevel = %v, want 0.5", got)
	}
	def := leadBook(t)
	if got := def.Options().LeadLevel; got != reputation.DefaultLeadLevel {
		t.Errorf("default Options().LeadLevel = %v, want DefaultLeadLevel", got)
	}
	for _, b := range []*reputation.Book{half, def} {
		feedLead(t, b, lostLead, 1)
		feedLead(t, b, wonLead, 2)
	}
	l, ok, err := half.Leader(ctx, leadScope, sessions)
	if err != nil || !ok {
		t.Fatalf("at 1/2, after 2 wins and 1 loss: no leader (%v)", err)
	}
	if diff := cmp.Diff(reputation.Lead{Session: 1, Won: 2, Lost: 1, Level: 0.5, Margin: marginOf(t, half, leadScope, sessions, 1)}, l); diff != "" {
		t.Errorf("leader at 1/2 (-want +got):\n%s", diff)
	}
	if l, ok, _ := def.Leader(ctx, leadScope, sessions); ok {
		t.Errorf("at 1/8, after 2 wins and 1 loss: leader %+v; want none (p = 1/2)", l)
	}
	feedLead(t, half, lostLead, 1)
	if l, ok, _ := half.Leader(ctx, leadScope, sessions); ok {
		t.Errorf("at 1/2, after 2 wins and 2 losses: leader %+v; want none (p = 11/16)", l)
	}
}

// wonLead and lostLead are validations reported wrong on which session 1
// dissented from sessions 2 and 3, rightly, and backed the outcome
// against them, wrongly.
var (
	wonLead  = []reputation.Ballot{{Session: 1, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}}
	lostLead = []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}, {Session: 3, Opposed: true}}
)

// feedLead reports ballots wrong n times on b.
func feedLead(t *testing.T, b *reputation.Book, ballots []reputation.Ballot, n int) {
	t.Helper()
	for range n {
		if err := b.Feedback(context.Background(), leadScope, ballots, false); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBook_Leader_margin: a session whose reliability stands at least
// LeadMargin above every other session's leads at 1/2 once it has won
// two disagreements, never on one, and not while its margin is short of
// LeadMargin.
func TestBook_Leader_margin(t *testing.T) {
	ctx := context.Background()
	sessions := []int64{1, 2, 3}
	def, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := def.Options().LeadMargin; got != reputation.DefaultLeadMargin {
		t.Errorf("default Options().LeadMargin = %v, want DefaultLeadMargin", got)
	}
	wide, err := reputation.New(nil, reputation.Options{LeadMargin: 0.1})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range []*reputation.Book{def, wide} {
		feedLead(t, b, wonLead, 1)
	}
	if m := marginOf(t, def, leadScope, sessions, 1); m < reputation.DefaultLeadMargin {
		t.Fatalf("after one win, session 1's margin is %v; the test wants it clear of the default", m)
	}
	if l, ok, _ := def.Leader(ctx, leadScope, sessions); ok {
		t.Errorf("after one win: leader %+v; want none on one disagreement", l)
	}
	// One loss, two wins: p = 1/2, a margin between 0.05 and 0.1.
	for _, b := range []*reputation.Book{def, wide} {
		feedLead(t, b, lostLead, 1)
		feedLead(t, b, wonLead, 1)
	}
	m := marginOf(t, def, leadScope, sessions, 1)
	if m < reputation.DefaultLeadMargin || m >= 0.1 {
		t.Fatalf("after 2 wins and 1 loss, session 1's margin is %v; the test wants it in [0.05, 0.1)", m)
	}
	l, ok, err := def.Leader(ctx, leadScope, sessions)
	if err != nil || !ok {
		t.Fatalf("after 2 wins and 1 loss, a margin of %v: no leader (%v)", m, err)
	}
	if diff := cmp.Diff(reputation.Lead{Session: 1, Won: 2, Lost: 1, Level: reputation.MaxLeadLevel, Margin: m}, l); diff != "" {
		t.Errorf("leader by its margin (-want +got):\n%s", diff)
	}
	if l, ok, _ := wide.Leader(ctx, leadScope, sessions); ok {
		t.Errorf("a margin of %v under LeadMargin 0.1: leader %+v; want none (p = 1/2)", m, l)
	}
}

// TestBook_Leader_againstTheOthers: a session's record is scored against
// the majority of the call's other votes, not the outcome it backed. A
// vote that backed a wrong outcome against two others that opposed it
// loses (as a leader deciding alone against the panel would); one whose
// others split evenly scores nothing. A session with a winning record
// does not lead while another session's outcomes rank it higher.
func TestBook_Leader_againstTheOthers(t *testing.T) {
	ctx, b := context.Background(), leadBook(t)
	sessions := []int64{1, 2, 3}
	// Session 1 backs a wrong outcome that sessions 2 and 3 opposed.
	overruled := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}, {Session: 3, Opposed: true}}
	if err := b.Feedback(ctx, leadScope, overruled, false); err != nil {
		t.Fatal(err)
	}
	// Four wins of session 1 after that loss: 4–1 is no lead (p = 3/16),
	// where the decisions alone, which it did not oppose, would count
	// 4–0.
	for range 4 {
		ballots := []reputation.Ballot{{Session: 1, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}}
		if err := b.Feedback(ctx, leadScope, ballots, false); err != nil {
			t.Fatal(err)
		}
	}
	if l, ok, _ := b.Leader(ctx, leadScope, sessions); ok {
		t.Fatalf("leader %+v after session 1's loss and four wins", l)
	}
	// Session 2 opposes sessions 1 and 3 on wrong outcomes: it wins, and
	// they, whose others split 1–1, score nothing.
	for i := range 4 {
		ballots := []reputation.Ballot{{Session: 2, Opposed: true}, {Session: 1, Backed: true}, {Session: 3, Backed: true}}
		if err := b.Feedback(ctx, leadScope, ballots, false); err != nil {
			t.Fatal(err)
		}
		if _, ok, _ := b.Leader(ctx, leadScope, sessions); ok != (i >= 2) {
			t.Fatalf("after %d wins of session 2: leader %v", i+1, ok)
		}
	}
	l, _, err := b.Leader(ctx, leadScope, sessions)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reputation.Lead{Session: 2, Won: 4, Level: reputation.DefaultLeadLevel, Margin: marginOf(t, b, leadScope, sessions, 2)}, l); diff != "" {
		t.Errorf("leader (-want +got):\n%s", diff)
	}
	// Session 1's record: one loss (overruled), then nothing while it
	// sided with session 3 against session 2 (others split).
	if _, ok, _ := b.Leader(ctx, leadScope, []int64{1}); ok {
		t.Error("session 1, with one loss, leads")
	}
	// Outcomes that rank session 4 above session 2 take the lead away.
	for range 10 {
		if err := b.Feedback(ctx, leadScope, []reputation.Ballot{{Session: 4, Backed: true}}, true); err != nil {
			t.Fatal(err)
		}
	}
	if l, ok, _ := b.Leader(ctx, leadScope, append(sessions, 4)); ok {
		t.Errorf("leader %+v while session 4's outcomes rank it higher", l)
	}
}

// TestBook_Leader_order checks that the leader does not depend on the
// order the sessions are asked in: two sessions with equally significant
// records, of which the more reliable leads whichever comes first.
func TestBook_Leader_order(t *testing.T) {
	ctx, b := context.Background(), leadBook(t)
	bothDissent := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true}, {Session: 4, Opposed: true}}
	for range 4 {
		if err := b.Feedback(ctx, leadScope, bothDissent, false); err != nil {
			t.Fatal(err)
		}
	}
	// Session 4 alone, right: its reliability rises, its record does not
	// move (no other vote to disagree with).
	if err := b.Feedback(ctx, leadScope, []reputation.Ballot{{Session: 4, Backed: true}}, true); err != nil {
		t.Fatal(err)
	}
	want := reputation.Lead{Session: 4, Won: 4, Level: reputation.DefaultLeadLevel, Margin: marginOf(t, b, leadScope, []int64{1, 2, 3, 4}, 4)}
	for _, sessions := range [][]int64{{1, 2, 3, 4}, {4, 3, 2, 1}, {3, 4, 1, 2}} {
		l, ok, err := b.Leader(ctx, leadScope, sessions)
		if err != nil || !ok {
			t.Fatalf("Leader(%v): no leader (%v)", sessions, err)
		}
		if diff := cmp.Diff(want, l); diff != "" {
			t.Errorf("Leader(%v) (-want +got):\n%s", sessions, diff)
		}
	}
}

// TestBook_Leader_check: a check's vote (Ballot.Check) teaches its
// session's reliability and no record against the other votes: a leader
// that a check proves wrong keeps its record of four wins, and loses its
// lead once the check's outcomes rank the checking session above it.
func TestBook_Leader_check(t *testing.T) {
	ctx, b := context.Background(), leadBook(t)
	sessions := []int64{1, 2}
	for range 4 {
		won := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}}
		if err := b.Feedback(ctx, leadScope, won, true); err != nil {
			t.Fatal(err)
		}
	}
	want := reputation.Lead{Session: 1, Won: 4, Level: reputation.DefaultLeadLevel}
	if l, ok, err := b.Leader(ctx, leadScope, sessions); err != nil || !ok || l.Margin <= 0 || want != (reputation.Lead{Session: l.Session, Won: l.Won, Lost: l.Lost, Level: l.Level}) {
		t.Fatalf("leader %+v (%v, %v), want %+v", l, ok, err, want)
	}
	before, err := b.Reliabilities(ctx, leadScope, sessions)
	if err != nil {
		t.Fatal(err)
	}
	checked := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true, Check: true}}
	for i := 1; ; i++ {
		if err := b.Feedback(ctx, leadScope, checked, false); err != nil {
			t.Fatal(err)
		}
		l, ok, err := b.Leader(ctx, leadScope, sessions)
		if err != nil {
			t.Fatal(err)
		}
		rel, err := b.Reliabilities(ctx, leadScope, sessions)
		if err != nil {
			t.Fatal(err)
		}
		if above := rel.Of(2) > rel.Of(1); ok == above {
			t.Fatalf("after %d checks proved session 1 wrong: leader %+v (%v), reliabilities %v", i, l, ok, rel.Sessions)
		}
		if ok {
			if l.Margin = 0; l != want {
				t.Fatalf("after %d checks: the leader's record %+v, want %+v unmoved", i, l, want)
			}
			continue
		}
		if rel.Of(1) >= before.Of(1) || rel.Of(2) <= before.Of(2) {
			t.Errorf("reliabilities went from %v to %v; want session 1's down and the check's up", before.Sessions, rel.Sessions)
		}
		if i == 1 {
			t.Errorf("the lead ended after one check; want it to take the outcomes that rank session 2 higher")
		}
		break
	}
	// The check's own record against the other votes did not move.
	if l, ok, _ := b.Leader(ctx, leadScope, []int64{2}); ok || l.Won != 0 {
		t.Errorf("session 2's record %+v (leads %v) after checks alone", l, ok)
	}
}

// TestBook_Leader_leastPValueMustBeMostReliable: the record of least
// p-value decides, and its session leads only when it is also the most
// reliable. Session 1 has won five disagreements in five (p = 1/32) but
// was wrong alone since; session 4 has won three in three (p = 1/8) and
// is the most reliable: no session leads, rather than the one of the
// less significant record (the rule docs/ACCURACY.md measured and kept).
// Asked of session 4 and the others without session 1, session 4 leads.
func TestBook_Leader_leastPValueMustBeMostReliable(t *testing.T) {
	ctx := context.Background()
	b, err := reputation.New(nil, reputation.Options{LeadMargin: 1})
	if err != nil {
		t.Fatal(err)
	}
	scope := reputation.Scope{Operation: "validate_v3"}
	feed := func(ballots []reputation.Ballot, right bool, n int) {
		for range n {
			if err := b.Feedback(ctx, scope, ballots, right); err != nil {
				t.Fatal(err)
			}
		}
	}
	feed([]reputation.Ballot{{Session: 1, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}}, false, 5)
	feed([]reputation.Ballot{{Session: 4, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}}, false, 3)
	feed([]reputation.Ballot{{Session: 1, Backed: true}}, false, 6)
	feed([]reputation.Ballot{{Session: 4, Backed: true}}, true, 3)
	if l, ok, err := b.Leader(ctx, scope, []int64{1, 2, 3, 4}); err != nil || ok {
		t.Errorf("Leader of 1 to 4 = %+v, %v, %v; want none: session 1's record is the most significant, and session 4 the most reliable", l, ok, err)
	}
	if l, ok, err := b.Leader(ctx, scope, []int64{2, 3, 4}); err != nil || !ok || l.Session != 4 {
		t.Errorf("Leader of 2 to 4 = %+v, %v, %v; want session 4", l, ok, err)
	}
}
