package reputation_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

func TestRecordAdd(t *testing.T) {
	cases := []struct {
		r, d    reputation.Record
		horizon float64
		want    reputation.Record
	}{
		{reputation.Record{}, reputation.Record{Right: 1}, 0, reputation.Record{Right: 1}},
		{reputation.Record{Right: 3, Wrong: 1}, reputation.Record{Right: 0.5, Wrong: 0.5}, 0, reputation.Record{Right: 3.5, Wrong: 1.5}},
		{reputation.Record{Right: 3, Wrong: 1}, reputation.Record{Right: 0.5, Wrong: 0.5}, 5, reputation.Record{Right: 3.5, Wrong: 1.5}},
		{reputation.Record{Right: 8, Wrong: 2}, reputation.Record{Right: 0, Wrong: 10}, 10, reputation.Record{Right: 4, Wrong: 6}},
		{reputation.Record{Right: 500}, reputation.Record{Wrong: 1}, 500, reputation.Record{Right: 500 * 500.0 / 501, Wrong: 500.0 / 501}},
	}
	for _, c := range cases {
		got := c.r.Add(c.d, c.horizon)
		if math.Abs(got.Right-c.want.Right) > 1e-12 || math.Abs(got.Wrong-c.want.Wrong) > 1e-12 {
			t.Errorf("%+v.Add(%+v, %v) = %+v, want %+v", c.r, c.d, c.horizon, got, c.want)
		}
	}
}

func TestReliability(t *testing.T) {
	if got, want := (reputation.Record{}).Reliability(reputation.DefaultPrior()), reputation.DefaultPrior().Mean(); got != want {
		t.Errorf("an unknown session reads %v, want the prior's mean %v", got, want)
	}
	if got := (reputation.Record{Right: 16, Wrong: 4}).Reliability(reputation.DefaultPrior()); got != 0.8 {
		t.Errorf("Beta(20, 5) reads %v, want 0.8", got)
	}
	if got := (reputation.Record{Right: 95, Wrong: 0}).Reliability(reputation.DefaultPrior()); got != 99.0/100 {
		t.Errorf("95 right reads %v, want 0.99", got)
	}
}

func ExampleRecord_Reliability() {
	var r reputation.Record // a session never seen
	fmt.Printf("%.2f\n", r.Reliability(reputation.DefaultPrior()))
	r = r.Add(reputation.Record{Right: 45, Wrong: 5}, reputation.DefaultHorizon)
	fmt.Printf("%.3f\n", r.Reliability(reputation.DefaultPrior()))
	// Output:
	// 0.80
	// 0.891
}
