package consensus_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vouchkit/vouch/consensus"
	"go.uber.org/goleak"
)

// straggler records what each replica blocked on ctx observed.
type straggler struct {
	started sync.WaitGroup // Done when a straggler is waiting
	mu      sync.Mutex
	causes  map[int]error
	errs    map[int]error
	ran     atomic.Int32
}

func newStraggler(n int) *straggler {
	s := &straggler{causes: map[int]error{}, errs: map[int]error{}}
	s.started.Add(n)
	return s
}

// wait blocks until ctx is done, records its cause, and returns vote.
func (s *straggler) wait(ctx context.Context, i int, vote consensus.Vote) consensus.Vote {
	s.ran.Add(1)
	s.started.Done()
	<-ctx.Done()
	s.mu.Lock()
	s.causes[i], s.errs[i] = context.Cause(ctx), ctx.Err()
	s.mu.Unlock()
	return vote
}

// replicas returns a replica function whose replica i returns fast[i] at once
// when it is set, and otherwise waits on s.
func replicas(s *straggler, fast map[int]consensus.Label) func(context.Context, int) consensus.Vote {
	return func(ctx context.Context, i int) consensus.Vote {
		if l, ok := fast[i]; ok {
			return consensus.Vote{Session: int64(100 + i), Label: l, Latency: time.Millisecond}
		}
		// Cut short, a replica reports no answer; the runner must drop
		// what the vote still carries.
		return s.wait(ctx, i, consensus.Vote{Session: int64(100 + i), Label: cancelled, Answer: "late", Latency: time.Second})
	}
}

func TestRunner_Run_earlyQuorum(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := newStraggler(2)
	r := consensus.Runner{}
	out, err := r.Run(context.Background(), 5, replicas(s, map[int]consensus.Label{0: valid, 2: valid, 4: valid}))
	if err != nil {
		t.Fatal(err)
	}
	wantCauses := map[int]error{1: consensus.ErrDecided, 3: consensus.ErrDecided}
	if diff := cmp.Diff(wantCauses, s.causes, cmpErrors); diff != "" {
		t.Errorf("causes the stragglers saw (-want +got):\n%s", diff)
	}
	for i, err := range s.errs {
		if err != context.Canceled {
			t.Errorf("straggler %d: ctx.Err() = %v, want context.Canceled", i, err)
		}
	}
	reason := consensus.ErrDecided.Error()
	want := []consensus.Vote{
		{Session: 100, Label: valid, Latency: time.Millisecond},
		{Session: 101, Label: cancelled, Latency: time.Second, Reason: reason},
		{Session: 102, Label: valid, Latency: time.Millisecond},
		{Session: 103, Label: cancelled, Latency: time.Second, Reason: reason},
		{Session: 104, Label: valid, Latency: time.Millisecond},
	}
	if diff := cmp.Diff(want, out.Votes); diff != "" {
		t.Errorf("votes (-want +got):\n%s", diff)
	}
	// A unanimous early quorum reads as agreement 1: the cancelled
	// replicas are no votes.
	if out.Label != valid || out.Agreeing != 3 || out.Agreement != 1 || out.Confidence != 15.0/16 || out.LowConfidence {
		t.Errorf("Label, Agreeing, Agreement, Confidence, LowConfidence = %s, %d, %v, %v, %t; want VALID, 3, 1, 0.9375, false",
			out.Label, out.Agreeing, out.Agreement, out.Confidence, out.LowConfidence)
	}
	if out.Answered != 3 || out.Cancelled != 2 || out.Failed != 0 || out.Against != 0 {
		t.Errorf("Answered, Cancelled, Failed, Against = %d, %d, %d, %d; want 3, 2, 0, 0", out.Answered, out.Cancelled, out.Failed, out.Against)
	}
}

func TestRunner_Run_failHardStopsAtDisagreement(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := newStraggler(3)
	r := consensus.Runner{Policy: consensus.Policy{Disagreement: consensus.FailHard}}
	out, err := r.Run(context.Background(), 5, replicas(s, map[int]consensus.Label{0: valid, 1: invalid}))
	var oe *consensus.OutcomeError
	if !errors.As(err, &oe) || !errors.Is(err, consensus.ErrDisagreement) {
		t.Fatalf("err = %v, want an *OutcomeError wrapping ErrDisagreement", err)
	}
	if diff := cmp.Diff([]consensus.Label{valid, invalid, cancelled, cancelled, cancelled}, oe.Outcome.Verdicts); diff != "" {
		t.Errorf("verdicts in the error (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(out, oe.Outcome); diff != "" {
		t.Errorf("returned outcome differs from the error's:\n%s", diff)
	}
	for i := 2; i < 5; i++ {
		if s.causes[i] != consensus.ErrDecided {
			t.Errorf("straggler %d saw cause %v, want ErrDecided", i, s.causes[i])
		}
	}
}

func TestRunner_Run_deadline(t *testing.T) {
	for _, fm := range []consensus.FailureMode{consensus.FailuresNonVotes, consensus.FailuresNegative} {
		t.Run(string(fm), func(t *testing.T) {
			defer goleak.VerifyNone(t)
			s := newStraggler(2)
			var hadDeadline atomic.Bool
			r := consensus.Runner{Timeout: 20 * time.Millisecond, Policy: consensus.Policy{Failures: fm}}
			out, err := r.Run(context.Background(), 3, func(ctx context.Context, i int) consensus.Vote {
				_, ok := ctx.Deadline()
				hadDeadline.Store(ok)
				return replicas(s, map[int]consensus.Label{0: valid})(ctx, i)
			})
			if err != nil {
				t.Fatal(err)
			}
			if !hadDeadline.Load() {
				t.Error("the replicas' context has no deadline")
			}
			for i := 1; i < 3; i++ {
				if s.causes[i] != consensus.ErrDeadline || s.errs[i] != context.DeadlineExceeded {
					t.Errorf("straggler %d saw %v, %v; want ErrDeadline, DeadlineExceeded", i, s.causes[i], s.errs[i])
				}
			}
			if diff := cmp.Diff([]consensus.Label{valid, timeout, timeout}, out.Verdicts); diff != "" {
				t.Errorf("verdicts (-want +got):\n%s", diff)
			}
			wantWinner := 0 // one VALID against two non-votes
			if fm == consensus.FailuresNegative {
				wantWinner = -1 // one VALID against two timeouts
			}
			if out.Winner != wantWinner || !out.LowConfidence {
				t.Errorf("Winner, LowConfidence = %d, %t; want %d, true", out.Winner, out.LowConfidence, wantWinner)
			}
		})
	}
}

func TestRunner_Run_cancelled(t *testing.T) {
	defer goleak.VerifyNone(t)
	cause := errors.New("caller gave up")
	ctx, cancel := context.WithCancelCause(context.Background())
	s := newStraggler(2)
	go func() {
		s.started.Wait()
		cancel(cause)
	}()
	r := consensus.Runner{Timeout: time.Hour}
	out, err := r.Run(ctx, 3, replicas(s, map[int]consensus.Label{0: valid}))
	var oe *consensus.OutcomeError
	if !errors.As(err, &oe) || !errors.Is(err, cause) {
		t.Fatalf("err = %v, want an *OutcomeError wrapping the caller's cause", err)
	}
	for i := 1; i < 3; i++ {
		if s.causes[i] != cause {
			t.Errorf("straggler %d saw cause %v, want the caller's", i, s.causes[i])
		}
		if v := out.Votes[i]; v.Label != cancelled || v.Session != int64(100+i) || v.Answer != nil {
			t.Errorf("vote %d = %+v; want CANCELLED with its session and no answer", i, v)
		}
	}
}

func TestRunner_Run_waitsForEveryVote(t *testing.T) {
	defer goleak.VerifyNone(t)
	// Under fail_hard, agreement is only known once everyone has voted.
	var ran atomic.Int32
	r := consensus.Runner{Policy: consensus.Policy{Disagreement: consensus.FailHard}}
	out, err := r.Run(context.Background(), 5, func(ctx context.Context, i int) consensus.Vote {
		ran.Add(1)
		return consensus.Vote{Label: valid}
	})
	if err != nil {
		t.Fatal(err)
	}
	if ran.Load() != 5 || out.Agreeing != 5 {
		t.Errorf("ran %d replicas, %d agreeing; want 5, 5", ran.Load(), out.Agreeing)
	}
}

func TestRunner_Run_emptyLabelIsError(t *testing.T) {
	r := consensus.Runner{Aggregator: never{}}
	out, err := r.Run(context.Background(), 2, func(ctx context.Context, i int) consensus.Vote {
		if i == 0 {
			return consensus.Vote{}
		}
		return consensus.Vote{Label: valid}
	})
	if err != nil {
		t.Fatal(err)
	}
	if v := out.Votes[0]; v.Label != errLabel || v.Reason == "" {
		t.Errorf("vote 0 = %+v, want ERROR with a reason", v)
	}
}

func TestRunner_Run_badInput(t *testing.T) {
	var ran atomic.Int32
	replica := func(ctx context.Context, i int) consensus.Vote { ran.Add(1); return consensus.Vote{Label: valid} }
	for _, tt := range []struct {
		name string
		r    consensus.Runner
		n    int
	}{
		{"no replicas", consensus.Runner{}, 0},
		{"negative count", consensus.Runner{}, -1},
		{"unknown policy", consensus.Runner{Policy: consensus.Policy{Disagreement: "all"}}, 3},
	} {
		if _, err := tt.r.Run(context.Background(), tt.n, replica); !errors.Is(err, consensus.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", tt.name, err)
		}
	}
	if ran.Load() != 0 {
		t.Errorf("%d replicas ran on bad input", ran.Load())
	}
}

// never is Majority without early quorum.
type never struct{ consensus.Majority }

func (never) Decided([]consensus.Vote, consensus.Policy) bool { return false }

var cmpErrors = cmp.Comparer(func(a, b error) bool { return a == b })

// TestRunner_Run_lateDissent delivers the deciding vote and a dissenting
// answer at the same instant: whichever the runner reads first, the
// dissent is an answer, so it keeps its label and answer and counts
// against the winner instead of reading as CANCELLED.
func TestRunner_Run_lateDissent(t *testing.T) {
	defer goleak.VerifyNone(t)
	for range 50 {
		gate := make(chan struct{})
		go close(gate)
		r := consensus.Runner{}
		out, err := r.Run(context.Background(), 3, func(ctx context.Context, i int) consensus.Vote {
			v := consensus.Vote{Session: int64(100 + i), Label: valid, Answer: "yes"}
			switch i {
			case 1: // the deciding vote
				<-gate
			case 2: // the dissent, released with it
				<-gate
				v.Label, v.Answer = invalid, "no"
			}
			return v
		})
		if err != nil {
			t.Fatal(err)
		}
		if out.Label != valid || out.Answered != 3 || out.Against != 1 || out.Cancelled != 0 {
			t.Fatalf("Label %s, Answered %d, Against %d, Cancelled %d; want VALID, 3, 1, 0 (verdicts %v)",
				out.Label, out.Answered, out.Against, out.Cancelled, out.Verdicts)
		}
		if v := out.Votes[2]; v.Label != invalid || v.Answer != "no" {
			t.Fatalf("the dissent was recorded as %+v", v)
		}
		if out.Agreement != 2.0/3 || out.Confidence != consensus.Posterior(2, 1) || !out.Disagreement {
			t.Fatalf("Agreement %v, Confidence %v, Disagreement %t; want 2/3, 11/16, true", out.Agreement, out.Confidence, out.Disagreement)
		}
	}
}
