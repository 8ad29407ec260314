package reputation_test

// Helpers of the Book's property tests (book_property_*_test.go).

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/boltstore"
)

var propertyCtx = context.Background()

// propertyStores returns constructors of an empty Memory and an empty
// boltstore.Store.
func propertyStores() map[string]func(t *testing.T) reputation.Store {
	return map[string]func(t *testing.T) reputation.Store{
		"memory": func(t *testing.T) reputation.Store { return new(reputation.Memory) },
		"bolt": func(t *testing.T) reputation.Store {
			s, err := boltstore.Open(filepath.Join(t.TempDir(), "r.db"), 0)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
}

var propertyScopes = []reputation.Scope{
	{},
	{Operation: "a"},
	{Operation: "a", Kind: "x"},
	{Operation: "a", Kind: "y"},
	{Operation: "b"},
	{Operation: "b", Kind: "x"},
}

// keyUniverse returns every key a Book could write for sessions in
// propertyScopes that the tests read back: each level, the lead records, the
// confidence records, the panel's and the coincidence records.
func keyUniverse(sessions []int64) []reputation.Key {
	var keys []reputation.Key
	ops := []string{"", "a", "b"}
	kinds := []string{"", "x", "y"}
	for _, s := range sessions {
		for _, op := range ops {
			for _, k := range kinds {
				if op == "" && k != "" {
					continue
				}
				keys = append(keys, reputation.Key{Session: s, Operation: op, Kind: k})
			}
		}
		for _, op := range []string{"any", "a", "b"} {
			for _, k := range kinds {
				keys = append(keys, reputation.Key{Session: s, Operation: op, Kind: "lead " + k})
			}
			for _, k := range []string{"confidence u", "confidence uu", "confidence y", "confidence uy"} {
				keys = append(keys, reputation.Key{Session: s, Operation: op, Kind: k})
			}
		}
	}
	for _, op := range []string{"any", "a", "b"} {
		keys = append(keys, reputation.Key{Session: reputation.PanelSession, Operation: op})
		for _, k := range kinds {
			keys = append(keys, reputation.Key{Session: reputation.PanelSession, Operation: op, Kind: "coincidence " + k})
		}
	}
	return keys
}

func loadAll(t *testing.T, s reputation.Store, keys []reputation.Key) map[reputation.Key]reputation.Record {
	t.Helper()
	recs, err := s.Load(propertyCtx, keys)
	if err != nil {
		t.Fatal(err)
	}
	m := make(map[reputation.Key]reputation.Record, len(keys))
	for i, k := range keys {
		m[k] = recs[i]
	}
	return m
}

// randomBallots returns ballots of a few of sessions, each a backer, an
// opposer or another dissent, some with a confidence.
func randomBallots(r *rand.Rand, sessions []int64) []reputation.Ballot {
	n := 1 + r.IntN(len(sessions))
	perm := r.Perm(len(sessions))[:n]
	bs := make([]reputation.Ballot, n)
	for i, j := range perm {
		b := reputation.Ballot{Session: sessions[j]}
		switch r.IntN(3) {
		case 0:
			b.Backed = true
		case 1:
			b.Opposed = true
		}
		if r.IntN(2) == 0 {
			b.Confidence = 0.05 + 0.9*r.Float64()
		}
		bs[i] = b
	}
	return bs
}

func relOf(t *testing.T, b *reputation.Book, scope reputation.Scope, s int64) float64 {
	t.Helper()
	rel, err := b.Reliabilities(propertyCtx, scope, []int64{s})
	if err != nil {
		t.Fatal(err)
	}
	return rel.Sessions[s]
}

func near(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*max(1, math.Abs(a), math.Abs(b))
}

func fmtG(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
