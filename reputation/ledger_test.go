package reputation_test

import (
	"fmt"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// TestLedger_callersKeptApart: one caller's stream of calls forgets its
// own oldest calls, never another caller's, once it holds the most: bob's
// call stays reportable by its trace id however many calls alice makes.
func TestLedger_callersKeptApart(t *testing.T) {
	l := reputation.NewLedger(4)
	l.Put("bob", "b1", scope, nil)
	for i := range 100 {
		l.Put("alice", fmt.Sprint("a", i), scope, nil)
	}
	if _, _, ok := l.Get("bob", "b1"); !ok {
		t.Error("alice's calls made bob's call b1 forgotten")
	}
	for i := 97; i < 100; i++ {
		if _, _, ok := l.Get("alice", fmt.Sprint("a", i)); !ok {
			t.Errorf("alice's latest call a%d forgotten", i)
		}
	}
	if _, _, ok := l.Get("alice", "a96"); ok {
		t.Error("a96 is remembered beyond the bound")
	}
	// A new caller gets room from the caller holding the most.
	l.Put("carol", "c1", scope, nil)
	if _, _, ok := l.Get("carol", "c1"); !ok {
		t.Error("carol's call forgotten")
	}
	if _, _, ok := l.Get("bob", "b1"); !ok {
		t.Error("carol's call made bob's call forgotten")
	}
	if _, _, ok := l.Get("alice", "a97"); ok {
		t.Error("a97, alice's oldest, should have made room for carol's")
	}
}
