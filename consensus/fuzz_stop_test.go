package consensus_test

import (
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// fuzzStopNumber decodes b as a Stop's number: mostly b/200, else a value
// no caller should set but one might (negative, above 1, infinite, NaN).
func fuzzStopNumber(b byte) float64 {
	if b < 0xf8 {
		return float64(b) / 200
	}
	return []float64{0, -0.5, 1, 1.5, math.Inf(1), math.Inf(-1), math.NaN(), 0.75}[b-0xf8]
}

// FuzzStop plays a sequential call under any Stop (threshold, Lone, Max,
// weight, flip bound and calibration map, in range or not) against any
// panel, unweighted or weighted, and checks that Next never asks for
// more runs than are left (of Max, taken as at most 100), returns 0
// exactly when the call is settled or no run is left, so that the call
// ends within Max runs; and that Accept
// reports a winner only: of two agreeing votes or more, or one answer
// alone, nothing against it, whose confidence reaches Lone.
func FuzzStop(f *testing.F) {
	f.Add([]byte{0, 0, 1, 0, 0}, byte(0), byte(0), byte(0), byte(0), byte(0), int16(0), byte(0))
	f.Add([]byte{0, 1, 0, 1, 2, 0, 0}, byte(140), byte(190), byte(0), byte(0), byte(0), int16(7), byte(1))
	f.Add([]byte{0, 0}, byte(140), byte(0), byte(0), byte(0), byte(0), int16(5), byte(0))
	f.Add([]byte{0, 0}, byte(140), byte(190), byte(0), byte(0), byte(0), int16(5), byte(0))
	f.Add([]byte{0, 1, 1, 0}, byte(194), byte(0), byte(120), byte(10), byte(0), int16(5), byte(0x13))
	f.Add([]byte{0, 0, 0}, byte(0xfb), byte(0xfe), byte(0xfc), byte(0xfe), byte(0xfe), int16(-3), byte(0x22))
	f.Add([]byte{3, 0, 4, 0}, byte(100), byte(0xff), byte(0xfa), byte(0xfd), byte(50), int16(9), byte(0x31))
	f.Add([]byte{0, 0}, byte(0xfa), byte(0), byte(0), byte(0), byte(0), int16(math.MaxInt16), byte(0))
	f.Fuzz(func(t *testing.T, data []byte, threshold, lone, weight, flip, conf byte, maxRuns int16, mode byte) {
		s := consensus.Stop{
			Threshold: fuzzStopNumber(threshold),
			Lone:      fuzzStopNumber(lone),
			Max:       int(maxRuns),
			Weight:    fuzzStopNumber(weight) * 4,
			Flip:      fuzzStopNumber(flip),
		}
		switch mode >> 4 & 3 {
		case 1:
			c := fuzzStopNumber(conf)
			s.Calibrate = func(float64, float64) float64 { return c }
		case 2:
			s.Calibrate = func(_, conservative float64) float64 { return conservative }
		}
		max := min(s.Max, 100)
		if max == 0 {
			max = consensus.DefaultMaxRuns
		}
		weighted := mode&1 != 0
		rel := consensus.Reliabilities{Sessions: map[int64]float64{}, Correlation: float64(mode>>1&7) / 8}
		aggregate := func(votes []consensus.Vote) consensus.Outcome {
			var out consensus.Outcome
			var err error
			if weighted {
				out, err = consensus.Weighted{Reliabilities: rel}.Aggregate(votes, consensus.Policy{})
			} else {
				out, err = consensus.Majority{}.Aggregate(votes, consensus.Policy{})
			}
			if err != nil {
				t.Fatalf("Aggregate: %v", err)
			}
			return out
		}
		labels := []consensus.Label{valid, invalid, errLabel, cancelled, consensus.LabelTimeout}
		var votes []consensus.Vote
		var out consensus.Outcome
		for {
			left := max - out.Replicas
			k := s.Next(out)
			if k < 0 || k > left && k > 0 {
				t.Fatalf("after %d runs of %d, Next = %d", out.Replicas, max, k)
			}
			if settled := s.Settled(out); (k == 0) != (settled || left <= 0) {
				t.Fatalf("after %d runs of %d (settled %v), Next = %d", out.Replicas, max, settled, k)
			}
			if k == 0 || len(votes) >= 16 {
				break // a call of more runs is the same call, longer
			}
			for range min(k, 16-len(votes)) {
				i := len(votes)
				v := consensus.Vote{Session: int64(i + 1), Label: valid}
				if i < len(data) {
					v.Label = labels[data[i]%5]
					v.Confidence = float64(data[i]/5) / 51
					rel.Sessions[v.Session] = float64(data[i]) / 255
				}
				votes = append(votes, v)
			}
			out = aggregate(votes)
		}
		if !s.Accept(out) {
			return
		}
		switch {
		case out.Winner < 0 || out.Agreeing < 1:
			t.Fatalf("accepted no winner: %+v", out)
		case out.Agreeing == 1 && !(s.Lone > 0 && out.Against == 0 && out.Votes[out.Winner].Confidence >= s.Lone):
			t.Fatalf("accepted one answer alone (confidence %v, %d against) under %+v", out.Votes[out.Winner].Confidence, out.Against, s)
		}
	})
}
