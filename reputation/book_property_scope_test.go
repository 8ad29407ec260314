package reputation_test

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

func reservedOp(sc reputation.Scope) string {
	if sc.Operation == "" {
		return "any"
	}
	return sc.Operation
}

func scopeKind(sc reputation.Scope) string {
	if sc.Operation == "" {
		return ""
	}
	return sc.Kind
}

// ownKeys returns the keys of session s that the package doc and Forget
// doc assign to scope sc: its levels, its lead record, its confidence
// records.
func ownKeys(sc reputation.Scope, s int64) map[reputation.Key]bool {
	m := map[reputation.Key]bool{}
	for _, k := range levelKeys(sc, s) {
		m[k] = true
	}
	m[reputation.Key{Session: s, Operation: reservedOp(sc), Kind: "lead " + scopeKind(sc)}] = true
	for _, k := range []string{"confidence u", "confidence uu", "confidence y", "confidence uy"} {
		m[reputation.Key{Session: s, Operation: reservedOp(sc), Kind: k}] = true
	}
	return m
}

// A report in scope A writes only the records of the sessions it names in
// A (their levels, lead and confidence records): nothing of another
// session, nor of another scope below the session's wider levels.
func TestBookProperty_ReportsKeptApart(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(9, 10))
			sessions := []int64{1, 2, 3, 4, 5}
			universe := keyUniverse(sessions)
			st := newStore(t)
			b, _ := reputation.New(st, reputation.Options{Horizon: 30})
			trials := 300
			if name == "bolt" {
				trials = 40
			}
			for range trials {
				sc := propertyScopes[r.IntN(len(propertyScopes))]
				bs := randomBallots(r, sessions)
				allowed := map[reputation.Key]bool{}
				named := map[int64]bool{}
				for _, bl := range bs {
					named[bl.Session] = true
					for k := range ownKeys(sc, bl.Session) {
						allowed[k] = true
					}
				}
				before := loadAll(t, st, universe)
				relBefore := map[reputation.Scope]consensus.Reliabilities{}
				for _, sc2 := range propertyScopes {
					relBefore[sc2], _ = b.Reliabilities(propertyCtx, sc2, sessions)
				}
				if err := b.Feedback(propertyCtx, sc, bs, r.IntN(2) == 0); err != nil {
					t.Fatal(err)
				}
				after := loadAll(t, st, universe)
				for k, v := range after {
					if v.Right < 0 || v.Wrong < 0 || v.Right+v.Wrong > 30*(1+1e-12) {
						t.Fatalf("record %+v = %+v beyond the horizon 30", k, v)
					}
					if v != before[k] && !allowed[k] {
						t.Fatalf("Feedback in %+v on %+v changed %+v: %+v -> %+v", sc, bs, k, before[k], v)
					}
				}
				for _, sc2 := range propertyScopes {
					rel, _ := b.Reliabilities(propertyCtx, sc2, sessions)
					for _, s := range sessions {
						if !named[s] && rel.Sessions[s] != relBefore[sc2].Sessions[s] {
							t.Fatalf("Feedback in %+v moved session %d (not named) in %+v", sc, s, sc2)
						}
					}
				}
			}
		})
	}
}

// Forget(scope, s) makes s read in scope as a session never seen (the
// Prior's mean and counts, no lead record, no slope), and changes no
// record but s's own in scope.
func TestBookProperty_Forget(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(11, 12))
			sessions := []int64{1, 2, 3, 4}
			universe := keyUniverse(sessions)
			trials := 100
			if name == "bolt" {
				trials = 10
			}
			for range trials {
				o := randomOptions(r)
				st := newStore(t)
				b, _ := reputation.New(st, o)
				feedRandom(t, b, r, sessions, r.IntN(40))
				// Some slopes from Learn too.
				for range r.IntN(10) {
					votes := []consensus.Vote{{Session: 1 + r.Int64N(4), Label: consensus.LabelValid, Confidence: r.Float64()}, {Session: 1 + r.Int64N(4), Label: consensus.LabelInvalid, Confidence: r.Float64()}}
					sc := propertyScopes[r.IntN(len(propertyScopes))]
					rel, _ := b.Reliabilities(propertyCtx, sc, []int64{votes[0].Session, votes[1].Session})
					if err := b.Learn(propertyCtx, sc, votes, consensus.Policy{}, rel); err != nil {
						t.Fatal(err)
					}
				}
				sc := propertyScopes[r.IntN(len(propertyScopes))]
				s := sessions[r.IntN(len(sessions))]
				before := loadAll(t, st, universe)
				if err := b.Forget(propertyCtx, sc, s); err != nil {
					t.Fatal(err)
				}
				after := loadAll(t, st, universe)
				own := ownKeys(sc, s)
				for k, v := range after {
					switch {
					case own[k] && v != (reputation.Record{}):
						t.Fatalf("Forget(%+v, %d) left %+v at %+v", sc, s, k, v)
					case !own[k] && v != before[k]:
						t.Fatalf("Forget(%+v, %d) changed %+v: %+v -> %+v", sc, s, k, before[k], v)
					}
				}
				fresh, _ := reputation.New(nil, o)
				rel, ev, err := b.Evidence(propertyCtx, sc, []int64{s})
				if err != nil {
					t.Fatal(err)
				}
				frel, fev, _ := fresh.Evidence(propertyCtx, sc, []int64{s})
				if rel.Sessions[s] != frel.Sessions[s] || ev[s] != fev[s] || rel.Confidence[s] != frel.Confidence[s] {
					t.Fatalf("after Forget(%+v, %d): reads %v %+v %+v, a session never seen %v %+v %+v", sc, s, rel.Sessions[s], ev[s], rel.Confidence[s], frel.Sessions[s], fev[s], frel.Confidence[s])
				}
				snap, _ := b.Snapshot(propertyCtx, sc, reputation.SnapshotRequest{Leader: []int64{s}})
				if snap.Leads || snap.Records[0] != (reputation.Lead{Session: s}) {
					t.Fatalf("after Forget: lead record %+v leads %v", snap.Records[0], snap.Leads)
				}
			}
		})
	}
}

// Identify across two Books over one store (two servers): the first
// identity changes nothing, the same one again changes nothing, another
// one forgets the session in every scope once, and the other server then
// finds it the same. Concurrent identifications of one new worker forget
// once.
func TestBookProperty_IdentifyTwoServers(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(13, 14))
			sessions := []int64{1, 2, 3}
			universe := keyUniverse(sessions)
			st := newStore(t)
			b1, _ := reputation.New(st, reputation.Options{})
			b2, _ := reputation.New(st, reputation.Options{})
			books := []*reputation.Book{b1, b2}
			current := map[int64]string{}
			workers := []string{"m1", "m2", "m3"}
			steps := 200
			if name == "bolt" {
				steps = 40
			}
			for range steps {
				feedRandom(t, books[r.IntN(2)], r, sessions, 1+r.IntN(3))
				s := sessions[r.IntN(len(sessions))]
				w := workers[r.IntN(len(workers))]
				b := books[r.IntN(2)]
				before := loadAll(t, st, universe)
				changed, err := b.Identify(propertyCtx, s, w)
				if err != nil {
					t.Fatal(err)
				}
				want := current[s] != "" && current[s] != w
				current[s] = w
				if changed != want {
					t.Fatalf("Identify(%d, %q) changed %v, want %v", s, w, changed, want)
				}
				after := loadAll(t, st, universe)
				for k, v := range after {
					mine := k.Session == s
					switch {
					case changed && mine && v != (reputation.Record{}):
						t.Fatalf("Identify forgot the session but left %+v at %+v", k, v)
					case (!changed || !mine) && v != before[k]:
						t.Fatalf("Identify(%d, %q) changed %v: changed %+v %+v -> %+v", s, w, changed, k, before[k], v)
					}
				}
			}
			// Both servers identify a new worker at once: one forgets.
			for _, s := range sessions {
				var wg sync.WaitGroup
				var mu sync.Mutex
				n := 0
				for _, b := range books {
					wg.Go(func() {
						changed, err := b.Identify(propertyCtx, s, "fresh")
						if err != nil {
							t.Error(err)
						}
						if changed {
							mu.Lock()
							n++
							mu.Unlock()
						}
					})
				}
				wg.Wait()
				if n != 1 {
					t.Fatalf("session %d: %d servers found the change, want 1", s, n)
				}
				for _, b := range books {
					if changed, err := b.Identify(propertyCtx, s, "fresh"); err != nil || changed {
						t.Fatalf("the same identity again: changed %v, err %v", changed, err)
					}
				}
			}
		})
	}
}

// Two servers identifying two other workers at once both find a change
// (Identify doc: "A server identifying another worker at once finds a
// change too").
func TestBookProperty_IdentifyTwoWorkersAtOnce(t *testing.T) {
	for name, newStore := range propertyStores() {
		t.Run(name, func(t *testing.T) {
			for round := range 20 {
				st := newStore(t)
				b1, _ := reputation.New(st, reputation.Options{})
				b2, _ := reputation.New(st, reputation.Options{})
				if _, err := b1.Identify(propertyCtx, 1, "old"); err != nil {
					t.Fatal(err)
				}
				var wg sync.WaitGroup
				res := make([]bool, 2)
				for i, b := range []*reputation.Book{b1, b2} {
					wg.Go(func() {
						c, err := b.Identify(propertyCtx, 1, []string{"y", "z"}[i])
						if err != nil {
							t.Error(err)
						}
						res[i] = c
					})
				}
				wg.Wait()
				if !res[0] || !res[1] {
					t.Fatalf("round %d: changed %v, want both true", round, res)
				}
				// Exactly one of y and z is now recorded.
				cy, _ := b1.Identify(propertyCtx, 1, "y")
				if cy {
					// y was not the last: now y is; z reads a change.
					if cz, _ := b2.Identify(propertyCtx, 1, "z"); !cz {
						t.Fatalf("round %d: z after y reads no change", round)
					}
				}
				if round > 3 && name == "bolt" {
					break
				}
			}
		})
	}
}
