package router

import (
	"fmt"
	"math"
	"testing"
)

// TestShareWeight: a caller over the bound teaches so that it supplies the
// bound of the evidence, mine·w = bound/(1−bound)·others; one at or under
// the bound, alone, or under no bound teaches fully.
func TestShareWeight(t *testing.T) {
	tests := []struct {
		name         string
		bound        float64
		mine, others int
		want         float64
	}{
		{"alone", 0.5, 500, 0, 1},
		{"first call", 0.5, 1, 0, 1},
		{"equal", 0.5, 250, 250, 1},
		{"under the bound", 0.5, 200, 300, 1},
		{"nine to one", 0.5, 450, 50, 1.0 / 9},
		{"one other call", 0.5, 499, 1, 1.0 / 499},
		{"bound 0.8, nine to one", 0.8, 450, 50, 4 * 50.0 / 450},
		{"bound 0.8, four to one", 0.8, 400, 100, 1},
		{"bound 0.25, equal", 0.25, 100, 100, 1.0 / 3},
		{"bound 1 is off", 1, 499, 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := shareWeight(tt.bound, tt.mine, tt.others)
			if math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("shareWeight(%v, %d, %d) = %v, want %v", tt.bound, tt.mine, tt.others, got, tt.want)
			}
		})
	}
}

// TestShares_admit: nine calls of one caller to one of another's, over
// two windows, admit one in nine of the first caller's once both are in
// the window, all of the other's; the state kept is of callers in the
// window only.
func TestShares_admit(t *testing.T) {
	s := shares{bound: 0.5}
	admitted := map[string]int{}
	for i := range 2 * DefaultShareWindow {
		caller := "key:flood"
		if i%10 == 9 {
			caller = "key:honest"
		}
		if s.admit(caller) {
			admitted[caller]++
		}
	}
	// The flooder's first nine calls teach fully (it is alone); from
	// the tenth on, each weighs 1/9 or a little more while the window
	// fills, and exactly 1/9 once it is full.
	if got := admitted["key:honest"]; got != 100 {
		t.Errorf("honest caller: %d calls admitted, want all 100", got)
	}
	if got := admitted["key:flood"]; got < 100 || got > 110 {
		t.Errorf("flooder: %d of 900 calls admitted, want about 9 + 891/9 (100 to 110)", got)
	}
	for i := range DefaultShareWindow {
		s.admit(fmt.Sprintf("key:%d", i%7))
	}
	if len(s.callers) != 7 {
		t.Errorf("after a window of seven other callers, %d callers are kept, want 7", len(s.callers))
	}
}
