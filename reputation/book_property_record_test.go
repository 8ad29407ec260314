package reputation_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// addDoc is Record.Add as its doc states it, written apart.
func addDoc(r, d reputation.Record, h float64) reputation.Record {
	right, wrong := r.Right+d.Right, r.Wrong+d.Wrong
	if right < 0 {
		right = 0
	}
	if wrong < 0 {
		wrong = 0
	}
	if h > 0 && right+wrong > h {
		right, wrong = right*h/(right+wrong), wrong*h/(right+wrong)
	}
	return reputation.Record{Right: right, Wrong: wrong}
}

// Record.Add follows its doc; a full record stays at the horizon; once
// full, a unit of evidence weighs the old ones by H/(H+1).
func TestBookProperty_RecordAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		h := 0.0
		if r.IntN(3) > 0 {
			h = r.Float64() * 100
		}
		rec := reputation.Record{Right: r.Float64() * 60, Wrong: r.Float64() * 60}
		if h > 0 && rec.Right+rec.Wrong > h {
			rec = addDoc(rec, reputation.Record{}, h)
		}
		d := reputation.Record{Right: (r.Float64() - 0.3) * 30, Wrong: (r.Float64() - 0.3) * 30}
		got, want := rec.Add(d, h), addDoc(rec, d, h)
		if !near(got.Right, want.Right, 1e-12) || !near(got.Wrong, want.Wrong, 1e-12) {
			t.Fatalf("%+v.Add(%+v, %v) = %+v, doc says %+v", rec, d, h, got, want)
		}
		if got.Right < 0 || got.Wrong < 0 || h > 0 && got.Right+got.Wrong > h*(1+1e-12) {
			t.Fatalf("%+v.Add(%+v, %v) = %+v out of range", rec, d, h, got)
		}
	}
	// Full record: one unit of Right weighs the old by H/(H+1).
	full := reputation.Record{Right: 300, Wrong: 200}
	got := full.Add(reputation.Record{Right: 1}, 500)
	if want := (reputation.Record{Right: (300 + 1) * 500.0 / 501, Wrong: 200 * 500.0 / 501}); !near(got.Right, want.Right, 1e-12) || !near(got.Wrong, want.Wrong, 1e-12) {
		t.Fatalf("full record: got %+v, want %+v", got, want)
	}
}

// Deltas, horizons and keys out of range are refused with ErrInvalid by
// every store, adding nothing; options out of range by New.
func TestBookProperty_InvalidRefused(t *testing.T) {
	bad := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 2 * reputation.MaxCount, -2 * reputation.MaxCount}
	k := reputation.Key{Session: 1, Operation: "a"}
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			if err := s.Add(propertyCtx, 0, []reputation.Delta{{Key: k, Delta: reputation.Record{Right: 2, Wrong: 1}}}); err != nil {
				t.Fatal(err)
			}
			check := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, reputation.ErrInvalid) {
					t.Errorf("%s: err %v, want ErrInvalid", what, err)
				}
				got := loadAll(t, s, []reputation.Key{k})[k]
				if got != (reputation.Record{Right: 2, Wrong: 1}) {
					t.Fatalf("%s: stored %+v after a refused add", what, got)
				}
			}
			for _, v := range bad {
				check("right "+ftoa(v), s.Add(propertyCtx, 0, []reputation.Delta{{Key: k, Delta: reputation.Record{Right: 1}}, {Key: k, Delta: reputation.Record{Right: v}}}))
				check("wrong "+ftoa(v), s.Add(propertyCtx, 0, []reputation.Delta{{Key: k, Delta: reputation.Record{Wrong: 1}}, {Key: k, Delta: reputation.Record{Wrong: v}}}))
				check("horizon "+ftoa(v), s.Add(propertyCtx, v, []reputation.Delta{{Key: k, Delta: reputation.Record{Wrong: 1}}}))
			}
			check("horizon -1", s.Add(propertyCtx, -1, []reputation.Delta{{Key: k, Delta: reputation.Record{Wrong: 1}}}))
			for _, key := range []reputation.Key{{Session: -1}, {Session: 1, Kind: "k"}, {Session: 1, Operation: "a\x00"}, {Session: 1, Operation: "\xff"}, {Session: 1, Operation: string(make([]byte, reputation.MaxNameLen+1))}} {
				check("key", s.Add(propertyCtx, 0, []reputation.Delta{{Key: k, Delta: reputation.Record{Wrong: 1}}, {Key: key, Delta: reputation.Record{Wrong: 1}}}))
				if _, err := s.Load(propertyCtx, []reputation.Key{k, key}); !errors.Is(err, reputation.ErrInvalid) {
					t.Errorf("Load(%+v): err %v, want ErrInvalid", key, err)
				}
			}
		})
	}
	opts := []reputation.Options{}
	for _, v := range append(slices.Clone(bad), -1) {
		opts = append(opts,
			reputation.Options{Horizon: v},
			reputation.Options{FeedbackWeight: v},
			reputation.Options{Prior: reputation.Prior{Right: v, Wrong: 1}},
			reputation.Options{Prior: reputation.Prior{Right: 1, Wrong: v}},
			reputation.Options{LeadLevel: v},
			reputation.Options{LeadMargin: v},
			reputation.Options{CalibrationPrior: v},
		)
	}
	opts = append(opts, reputation.Options{LeadLevel: 0.6}, reputation.Options{LeadMargin: 1.1}, reputation.Options{ReportWindow: -1})
	for _, o := range opts {
		if _, err := reputation.New(nil, o); !errors.Is(err, reputation.ErrInvalid) {
			t.Errorf("New(%+v): err %v, want ErrInvalid", o, err)
		}
	}
}

func ftoa(v float64) string { return fmtG(v) }

// The Book reads, for reports never filling a record, what the doc's
// formulas give on counts the test keeps itself: each Feedback as the
// Book doc credits it, each level's prior from the wider level's evidence
// outside it, through every store; and permuted reports read the same.
func TestBookProperty_ReadingMatchesDoc(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(7, 8))
			trials := 200
			if name == "bolt" {
				trials = 10
			}
			sessions := []int64{1, 2, 3}
			for range trials {
				o := randomOptions(r)
				o.Horizon = 1e9
				type report struct {
					sc      reputation.Scope
					ballots []reputation.Ballot
					right   bool
				}
				var reps []report
				for range r.IntN(30) {
					bs := randomBallots(r, sessions)
					for i := range bs {
						bs[i].Taught = r.IntN(6) == 0
						bs[i].Check = r.IntN(6) == 0
					}
					reps = append(reps, report{propertyScopes[r.IntN(len(propertyScopes))], bs, r.IntN(2) == 0})
				}
				b1, _ := reputation.New(newStore(t), o)
				b2, _ := reputation.New(newStore(t), o)
				w := o.FeedbackWeight
				if w == 0 {
					w = reputation.DefaultFeedbackWeight
				}
				prior := o.Prior
				if prior == (reputation.Prior{}) {
					prior = reputation.DefaultOutcomePrior()
				}
				counts := map[reputation.Key]reputation.Record{}
				for _, rp := range reps {
					if err := b1.Feedback(propertyCtx, rp.sc, rp.ballots, rp.right); err != nil {
						t.Fatal(err)
					}
					for _, bl := range rp.ballots {
						var d reputation.Record
						switch {
						case bl.Taught:
							continue
						case rp.right && bl.Backed:
							d.Right = w
						case rp.right:
							d.Wrong = w
						case bl.Backed:
							d.Wrong = w
						case bl.Opposed:
							d.Right = w
						default:
							continue
						}
						for _, k := range levelKeys(rp.sc, bl.Session) {
							c := counts[k]
							counts[k] = reputation.Record{Right: c.Right + d.Right, Wrong: c.Wrong + d.Wrong}
						}
					}
				}
				for _, i := range r.Perm(len(reps)) {
					if err := b2.Feedback(propertyCtx, reps[i].sc, reps[i].ballots, reps[i].right); err != nil {
						t.Fatal(err)
					}
				}
				strength := prior.Right + prior.Wrong
				for _, sc := range propertyScopes {
					rel1, err := b1.Reliabilities(propertyCtx, sc, sessions)
					if err != nil {
						t.Fatal(err)
					}
					rel2, _ := b2.Reliabilities(propertyCtx, sc, sessions)
					for _, s := range sessions {
						ks := levelKeys(sc, s)
						q := prior.Right / strength
						for j := 1; j < len(ks); j++ {
							wide, narrow := counts[ks[j-1]], counts[ks[j]]
							or, ow := wide.Right-narrow.Right, wide.Wrong-narrow.Wrong
							q = (or + strength*q) / (or + ow + strength)
						}
						n := counts[ks[len(ks)-1]]
						want := (n.Right + strength*q) / (n.Right + n.Wrong + strength)
						if !near(rel1.Sessions[s], want, 1e-9) {
							t.Fatalf("session %d in %+v reads %v, the doc's formula %v (counts %v)", s, sc, rel1.Sessions[s], want, counts)
						}
						if !near(rel2.Sessions[s], want, 1e-9) {
							t.Fatalf("permuted reports: session %d in %+v reads %v, in order %v", s, sc, rel2.Sessions[s], want)
						}
					}
				}
			}
		})
	}
}
