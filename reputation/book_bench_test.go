package reputation_test

import (
	"context"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// benchCall returns a book on the in-memory store, and the call of
// router's BenchmarkEngineReputation: five sessions that voted VALID with
// confidence 1 and no answer, as a validation's votes are, and the
// reliabilities the book reads for them.
func benchCall(b *testing.B) (*reputation.Book, []int64, []consensus.Vote, consensus.Reliabilities) {
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ids := []int64{1, 2, 3, 4, 5}
	votes := make([]consensus.Vote, len(ids))
	for i, id := range ids {
		votes[i] = consensus.Vote{Session: id, Label: consensus.LabelValid, Confidence: 1}
	}
	rel, err := book.Reliabilities(context.Background(), scope, ids)
	if err != nil {
		b.Fatal(err)
	}
	return book, ids, votes, rel
}

// BenchmarkBook_Learn measures what learning adds to a call of five votes
// in a scope of three levels.
func BenchmarkBook_Learn(b *testing.B) {
	ctx := context.Background()
	book, _, votes, rel := benchCall(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := book.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBook_Evidence measures what reading five sessions' records
// adds to a call, once the book holds them.
func BenchmarkBook_Evidence(b *testing.B) {
	ctx := context.Background()
	book, ids, votes, rel := benchCall(b)
	if err := book.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := book.Evidence(ctx, scope, ids); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBook_LearnOpen measures learning a call of five open answers
// that split, a pair among three single answers, which also teaches the
// coincidence of wrong answers (Book.Coincidence): handed, at the
// coincidence the call read (LearnAt, as trust hands it); read, by Learn,
// which reads it first.
func BenchmarkBook_LearnOpen(b *testing.B) {
	ctx := context.Background()
	book, _, _, rel := benchCall(b)
	votes := answers(`1`, `1`, `2`, `3`, `4`)
	b.Run("handed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := book.LearnAt(ctx, scope, votes, consensus.Policy{}, rel, consensus.DefaultCoincidence); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := book.Learn(ctx, scope, votes, consensus.Policy{}, rel); err != nil {
				b.Fatal(err)
			}
		}
	})
}
