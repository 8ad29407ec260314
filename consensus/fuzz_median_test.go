package consensus_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// FuzzMedian checks the numeric strategies on any panel of up to five
// replicas (numbers, outputs in words, failures, replicas still
// running), any tolerance and policy. The numbers are small whole ones,
// or any float64 where raw holds eight bytes for the replica (NaN and the
// infinities written as words, as JSON has no such number; a running
// replica's later answer from the eight bytes after the first five).
// Aggregation never panics, states a confidence in [0, 1], a finite
// aggregate and an agreement that follows from its counts, its backers
// are the numbers within the tolerance of the aggregate, and an outcome
// Decided reports settled keeps its aggregate within the tolerance once
// the running replicas answer whatever they answer.
func FuzzMedian(f *testing.F) {
	f.Add([]byte{10, 10, 10, 0, 0}, []byte{0, 0, 0, 1, 1}, uint8(0), uint8(0), uint8(0), []byte{99, 1}, []byte{})
	f.Add([]byte{1, 2, 3, 4, 5}, []byte{0, 2, 0, 3, 1}, uint8(5), uint8(3), uint8(1), []byte{200, 0, 7}, []byte{})
	f.Add([]byte{100, 104, 96}, []byte{0, 0, 1}, uint8(2), uint8(40), uint8(2), []byte{}, []byte{})
	f.Add([]byte{1, 2, 3}, []byte{0, 0, 0}, uint8(1), uint8(0), uint8(3), []byte{}, floatBytes(1e308, math.MaxFloat64, -math.MaxFloat64))
	f.Add([]byte{1, 2, 3, 4}, []byte{0, 0, 4, 1}, uint8(0), uint8(1), uint8(4),
		[]byte{}, floatBytes(math.SmallestNonzeroFloat64, math.NaN(), math.Inf(1), math.Copysign(0, -1), 0, 0, 0, 0, 0, 1e-300))
	f.Add([]byte{1, 2, 3}, []byte{0, 0, 0}, uint8(255), uint8(255), uint8(7), []byte{}, floatBytes(1e300, -1e300, 1e300))
	f.Fuzz(func(t *testing.T, xs, kinds []byte, abs, rel, mode uint8, later, raw []byte) {
		if len(xs) == 0 || len(xs) > 5 {
			return
		}
		tol := consensus.Tolerance{Absolute: float64(abs), Relative: float64(rel) / 100}
		full := make([]consensus.Vote, len(xs))
		partial := make([]consensus.Vote, len(xs))
		for i, x := range xs {
			number := strconv.Itoa(int(x))
			if len(raw) >= 8*(i+1) {
				number = fuzzNumber(raw[8*i:])
			}
			v := consensus.Vote{Session: int64(i + 1), Label: consensus.LabelOK, Answer: json.RawMessage(number)}
			k := byte(0)
			if i < len(kinds) {
				k = kinds[i] % 5
			}
			switch k {
			case 1: // running: its answer comes later
				if i < len(later) {
					v.Answer = json.RawMessage(strconv.Itoa(int(later[i]) * 7))
				}
				if len(raw) >= 8*(i+6) {
					v.Answer = json.RawMessage(fuzzNumber(raw[8*(i+5):]))
				}
			case 2:
				v.Answer = json.RawMessage(`"n/a"`)
			case 3:
				v = consensus.Vote{Session: int64(i + 1), Label: consensus.LabelError}
			case 4:
				v.Answer = json.RawMessage(strconv.Quote(strings.Trim(number, `"`)))
			}
			full[i], partial[i] = v, v
			if k == 1 {
				partial[i] = consensus.Vote{Session: int64(i + 1)}
			}
		}
		p := consensus.Policy{Disagreement: []consensus.DisagreementPolicy{consensus.BestEffort, consensus.ReturnAll, consensus.FailHard}[mode%3]}
		aggs := []consensus.Aggregator{consensus.Median{Tolerance: tol}, consensus.MedianOfMeans{Tolerance: tol},
			consensus.Median{Tolerance: tol, Reliabilities: &consensus.Reliabilities{Sessions: map[int64]float64{1: 0.9, 2: 0.6}}}}
		agg := aggs[int(mode/3)%len(aggs)]
		out, err := agg.Aggregate(full, p)
		if tol.Check() != nil { // out of range: refused, never aggregated
			if !errors.Is(err, consensus.ErrInvalid) {
				t.Fatalf("Aggregate with tolerance %+v: %v, want ErrInvalid", tol, err)
			}
			return
		}
		var oe *consensus.OutcomeError
		if err != nil && !errors.As(err, &oe) {
			t.Fatalf("Aggregate: %v", err)
		}
		if !(out.Confidence >= 0 && out.Confidence <= 1) || out.Agreement < 0 || out.Agreement > 1 || math.IsNaN(out.Value) || math.IsInf(out.Value, 0) {
			t.Fatalf("confidence %v, agreement %v, value %v", out.Confidence, out.Agreement, out.Value)
		}
		if out.Winner >= 0 {
			if out.Agreement != float64(out.Agreeing)/float64(out.Agreeing+out.Against) {
				t.Fatalf("agreement %v from %d agreeing, %d against", out.Agreement, out.Agreeing, out.Against)
			}
			for _, i := range out.Backers(nil) {
				if x, err := consensus.ParseNumber(full[i].Answer); err != nil || !tol.Agrees(x, out.Value) {
					t.Fatalf("backer %d (%s) does not agree with %v", i, full[i].Answer, out.Value)
				}
			}
			if len(out.Backers(nil)) != out.Agreeing {
				t.Fatalf("%d backers, %d agreeing", len(out.Backers(nil)), out.Agreeing)
			}
		}
		if p.Disagreement == consensus.FailHard || !agg.Decided(partial, p) {
			return
		}
		early := make([]consensus.Vote, len(partial))
		for i, v := range partial {
			if v.Label == "" {
				v.Label = consensus.LabelCancelled
			}
			early[i] = v
		}
		e, err := agg.Aggregate(early, p)
		if err != nil {
			t.Fatalf("Aggregate early: %v", err)
		}
		if !tol.Agrees(out.Value, e.Value) {
			t.Fatalf("decided at %v, but every vote gives %v (tolerance %+v)", e.Value, out.Value, tol)
		}
	})
}

// floatBytes encodes xs as FuzzMedian's raw numbers, eight bytes each.
func floatBytes(xs ...float64) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
	}
	return b
}

// fuzzNumber decodes the first eight bytes of b as a float64 and writes
// it as JSON can: a number, or NaN and the infinities as a string.
func fuzzNumber(b []byte) string {
	x := math.Float64frombits(binary.LittleEndian.Uint64(b))
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return strconv.Quote(strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
