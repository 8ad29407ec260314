package reputation_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// signTest returns P(Bin(won+lost, 1/2) >= won), computed apart; 1 for
// no win.
func signTest(won, lost int) float64 {
	if won <= 0 {
		return 1
	}
	n := won + lost
	p := 0.0
	for k := won; k <= n; k++ {
		lg, _ := math.Lgamma(float64(n + 1))
		la, _ := math.Lgamma(float64(k + 1))
		lb, _ := math.Lgamma(float64(n - k + 1))
		p += math.Exp(lg - la - lb - float64(n)*math.Ln2)
	}
	return p
}

func TestBookProperty_SignTestFigures(t *testing.T) {
	// The package doc: three in three, five in six, seven in nine, eight in
	// eleven pass at 1/8; 1/8 is three in three.
	for _, c := range [][2]int{{3, 0}, {5, 1}, {7, 2}, {8, 3}} {
		if p := (reputation.Lead{Won: float64(c[0]), Lost: float64(c[1])}).PValue(); p > reputation.DefaultLeadLevel || !near(p, signTest(c[0], c[1]), 1e-9) {
			t.Errorf("PValue %v of %v, sign test %v", p, c, signTest(c[0], c[1]))
		}
	}
	for _, c := range [][2]int{{2, 0}, {4, 1}, {6, 2}, {7, 3}} {
		if p := (reputation.Lead{Won: float64(c[0]), Lost: float64(c[1])}).PValue(); p <= reputation.DefaultLeadLevel {
			t.Errorf("PValue %v of %v passes at 1/8, shorter than the doc's records", p, c)
		}
	}
	r := rand.New(rand.NewPCG(15, 16))
	for range 20000 {
		l := reputation.Lead{Won: r.Float64() * 40, Lost: r.Float64() * 40}
		want := signTest(int(math.Round(l.Won)), int(math.Round(l.Lost)))
		if got := l.PValue(); !near(got, want, 1e-9) {
			t.Fatalf("%+v.PValue() = %v, sign test %v", l, got, want)
		}
	}
}

// Book.Leader follows its doc on records put in the store directly: the
// lead records under "lead <kind>" of the scope's operation, the
// reliabilities from the levels.
func TestBookProperty_LeaderRule(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	for trial := range 20000 {
		o := reputation.Options{}
		if r.IntN(2) == 0 {
			o.LeadLevel = []float64{0.5, 0.25, 0.05, 1.0 / 8}[r.IntN(4)]
		}
		if r.IntN(2) == 0 {
			o.LeadMargin = []float64{0.01, 0.1, 1, 0.05}[r.IntN(4)]
		}
		st := new(reputation.Memory)
		b, err := reputation.New(st, o)
		if err != nil {
			t.Fatal(err)
		}
		o = b.Options()
		sc := propertyScopes[r.IntN(len(propertyScopes))]
		n := 1 + r.IntN(5)
		sessions := make([]int64, n)
		for i, j := range r.Perm(8)[:n] { // distinct: see TestBookProperty_LeaderDuplicateSession
			sessions[i] = int64(1 + j)
		}
		var deltas []reputation.Delta
		for _, s := range sessions {
			if r.IntN(4) > 0 {
				won, lost := float64(r.IntN(10)), float64(r.IntN(5))
				if r.IntN(4) == 0 {
					won, lost = won*r.Float64(), lost*r.Float64()
				}
				deltas = append(deltas, reputation.Delta{Key: reputation.Key{Session: s, Operation: reservedOp(sc), Kind: "lead " + scopeKind(sc)}, Delta: reputation.Record{Right: won, Wrong: lost}})
			}
			if r.IntN(3) > 0 {
				d := reputation.Record{Right: float64(4 * r.IntN(6)), Wrong: float64(4 * r.IntN(3))}
				for _, k := range levelKeys(sc, s) {
					deltas = append(deltas, reputation.Delta{Key: k, Delta: d})
				}
			}
		}
		if len(deltas) > 0 {
			if err := st.Add(propertyCtx, 0, deltas); err != nil {
				t.Fatal(err)
			}
		}
		// Expected, from the doc.
		rel, err := b.Reliabilities(propertyCtx, sc, sessions)
		if err != nil {
			t.Fatal(err)
		}
		leadRecs := loadAll(t, st, func() []reputation.Key {
			var ks []reputation.Key
			for _, s := range sessions {
				ks = append(ks, reputation.Key{Session: s, Operation: reservedOp(sc), Kind: "lead " + scopeKind(sc)})
			}
			return ks
		}())
		best, bestP, bestRel := int64(-1), 2.0, 0.0
		maxRel := 0.0
		for _, s := range sessions {
			maxRel = max(maxRel, rel.Sessions[s])
		}
		for _, s := range sessions {
			rec := leadRecs[reputation.Key{Session: s, Operation: reservedOp(sc), Kind: "lead " + scopeKind(sc)}]
			won, lost := int(math.Round(rec.Right)), int(math.Round(rec.Wrong))
			margin := math.Inf(1)
			for _, s2 := range sessions {
				if s2 != s {
					margin = min(margin, rel.Sessions[s]-rel.Sessions[s2])
				}
			}
			if math.IsInf(margin, 1) {
				margin = 0
			}
			level := o.LeadLevel
			if margin >= o.LeadMargin && won >= 2 {
				level = 0.5
			}
			p := signTest(won, lost)
			if p > level+1e-12 {
				continue
			}
			if best < 0 || p < bestP-1e-12 || math.Abs(p-bestP) <= 1e-12 && (rel.Sessions[s] > bestRel || rel.Sessions[s] == bestRel && s < best) {
				best, bestP, bestRel = s, p, rel.Sessions[s]
			}
		}
		wantOK := best >= 0 && bestRel >= maxRel
		l, ok, err := b.Leader(propertyCtx, sc, sessions)
		if err != nil {
			t.Fatal(err)
		}
		if ok != wantOK || ok && l.Session != best {
			t.Fatalf("trial %d (%+v, scope %+v, sessions %v): Leader %+v %v, doc says %d %v; rel %v; lead records %v", trial, o, sc, sessions, l, ok, best, wantOK, rel.Sessions, leadRecs)
		}
		// A session with no record never leads.
		if ok {
			rec := leadRecs[reputation.Key{Session: l.Session, Operation: reservedOp(sc), Kind: "lead " + scopeKind(sc)}]
			if rec == (reputation.Record{}) {
				t.Fatalf("a session with no lead record leads: %+v", l)
			}
		}
	}
}

// A session named twice among the sessions of Leader is not its own
// "other session": a record that leads at MaxLeadLevel by its margin over
// every other session reads the same leader for [6 5 6] as for [6 5].
func TestBookProperty_LeaderDuplicateSession(t *testing.T) {
	st := new(reputation.Memory)
	b, _ := reputation.New(st, reputation.Options{})
	sc := reputation.Scope{Operation: "a"}
	// Session 6: 5 wins, 2 losses (p = 29/128 > 1/8, < 1/2); reliability
	// 0.8 against session 5's 0.75 (margin 0.05).
	err := st.Add(propertyCtx, 0, []reputation.Delta{
		{Key: reputation.Key{Session: 6, Operation: "a", Kind: "lead "}, Delta: reputation.Record{Right: 5, Wrong: 2}},
		{Key: reputation.Key{Session: 5}, Delta: reputation.Record{Right: 28, Wrong: 12}},
		{Key: reputation.Key{Session: 5, Operation: "a"}, Delta: reputation.Record{Right: 28, Wrong: 12}},
	})
	if err != nil {
		t.Fatal(err)
	}
	l1, ok1, _ := b.Leader(propertyCtx, sc, []int64{6, 5})
	l2, ok2, _ := b.Leader(propertyCtx, sc, []int64{6, 5, 6})
	if ok1 != ok2 || l1.Session != l2.Session {
		t.Errorf("Leader among [6 5]: %+v %v; among [6 5 6]: %+v %v (a duplicate should not change the leader)", l1, ok1, l2, ok2)
	}
}

// Feedback scores each verdict against the majority of the call's other
// verdicts (Lead doc), apart from checks and votes already scored: a win
// where they differed and it was right, a loss where it was wrong.
func TestBookProperty_LeadRecordsFromFeedback(t *testing.T) {
	r := rand.New(rand.NewPCG(41, 42))
	sessions := []int64{1, 2, 3, 4, 5}
	for range 300 {
		b, _ := reputation.New(nil, reputation.Options{Horizon: 1e9})
		type lk struct {
			sc reputation.Scope
			s  int64
		}
		want := map[lk]*reputation.Lead{}
		for range r.IntN(30) {
			sc := propertyScopes[r.IntN(len(propertyScopes))]
			bs := randomBallots(r, sessions)
			for i := range bs {
				bs[i].Check = r.IntN(6) == 0
				bs[i].Scored = r.IntN(6) == 0
				bs[i].Taught = r.IntN(6) == 0
			}
			right := r.IntN(2) == 0
			if err := b.Feedback(propertyCtx, sc, bs, right); err != nil {
				t.Fatal(err)
			}
			// Normalise scope: a Kind without an Operation is ignored.
			key := sc
			if key.Operation == "" {
				key.Kind = ""
			}
			for i, bl := range bs {
				if bl.Check || bl.Scored || !bl.Backed && !bl.Opposed {
					continue
				}
				forOutcome, forOther := 0, 0
				for j, o := range bs {
					if j == i || o.Check {
						continue
					}
					if o.Backed {
						forOutcome++
					} else if o.Opposed {
						forOther++
					}
				}
				if forOutcome == forOther || (forOutcome > forOther) == bl.Backed {
					continue
				}
				l := want[lk{key, bl.Session}]
				if l == nil {
					l = &reputation.Lead{Session: bl.Session}
					want[lk{key, bl.Session}] = l
				}
				if bl.Backed == right {
					l.Won++
				} else {
					l.Lost++
				}
			}
		}
		for _, sc := range propertyScopes {
			snap, err := b.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Leader: sessions})
			if err != nil {
				t.Fatal(err)
			}
			key := sc
			if key.Operation == "" {
				key.Kind = ""
			}
			for i, s := range sessions {
				w := reputation.Lead{Session: s}
				if l := want[lk{key, s}]; l != nil {
					w = *l
				}
				if snap.Records[i] != w {
					t.Fatalf("%+v session %d: lead record %+v, doc %+v", sc, s, snap.Records[i], w)
				}
			}
		}
	}
}
