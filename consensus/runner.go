package consensus

import (
	"context"
	"fmt"
	"time"
)

// A Runner runs the replicas of one job at the same time and aggregates
// their votes, stopping as soon as the outcome is decided.
//
// Run starts n goroutines, one per replica, each calling the replica
// function with a context derived from Run's and with the replica's index.
// Votes land in a slice by replica index. Whenever votes arrive, Run records
// all that are in, then asks Aggregator.Decided whether the votes still to
// come can change the outcome; Run stops waiting at the first of:
//
//   - every replica has voted;
//   - the outcome is decided: the replicas still running are cancelled with
//     cause ErrDecided and recorded as CANCELLED;
//   - Timeout passes: the replicas still running are cancelled with cause
//     ErrDeadline and recorded as TIMEOUT;
//   - Run's ctx is done: the replicas still running are cancelled with the
//     ctx's cause and recorded as CANCELLED, and Run returns an error.
//
// The cause reaches the replicas through context.Cause; their context also
// carries the Timeout as its deadline. A replica that answered keeps its
// vote even when the answer arrives after Run stopped waiting (or together
// with the deadline), as long as it arrives before Run returns: a cast vote
// is never relabelled, so an answer that dissents from an early quorum
// still counts against the winner (an early quorum's winner cannot change,
// since Decided said so). A vote that arrives late without an answer
// (TIMEOUT, ERROR or CANCELLED) keeps its Session and Latency and is
// recorded with the label above and the cause as Reason: its failure was
// most likely the cancellation.
//
// Run then waits for every replica to return, so no goroutine it started
// outlives the call: a replica function must return promptly once its
// context is done. When Abandon is set, Run waits for them only up to
// Grace: a replica still running then is abandoned, recorded with the
// label and reason above, and its goroutine lives on until the replica
// function returns, its vote discarded. A vote with an empty label is
// recorded as ERROR.
//
// Run does not recover panics: like errgroup, it leaves a panicking replica
// to crash the program, and callers that run untrusted code recover inside
// the replica function.
//
// It uses one goroutine per replica and a buffered channel rather than
// errgroup: failures are votes, not errors, and what cancels the replicas
// is the aggregator's decision, not the first error, so errgroup would add
// nothing but Wait.
//
// The zero Runner uses Majority under the zero Policy with no timeout. A
// Runner is safe for concurrent use once its fields are set.
type Runner struct {
	// Aggregator combines the votes and decides when to stop; nil means
	// Majority.
	Aggregator Aggregator
	// Policy is passed to the Aggregator.
	Policy Policy
	// Timeout bounds a whole Run; zero means no bound but the ctx's.
	Timeout time.Duration
	// Abandon lets Run return without the replicas still running Grace
	// after it stopped waiting for votes. false, the default, makes Run
	// wait for every replica to return, however long that takes.
	Abandon bool
	// Grace is how long Run waits, once it has stopped waiting for votes,
	// for the replicas still running to return when Abandon is set. Zero
	// (or negative) abandons at once those not yet returned. It is
	// ignored without Abandon.
	Grace time.Duration
}

// Run runs replica n times concurrently, as the Runner doc describes, and
// returns the aggregated outcome.
//
// Its errors are those of Aggregator.Aggregate (an *OutcomeError under
// FailHard), an error wrapping ErrInvalid for n < 1 or a bad Policy, or,
// when ctx is done before the outcome is decided, an *OutcomeError whose Err
// wraps context.Cause(ctx) and whose Outcome covers the votes gathered. In
// every case but bad input the returned Outcome is filled in.
func (r *Runner) Run(ctx context.Context, n int, replica func(ctx context.Context, replica int) Vote) (Outcome, error) {
	if n < 1 {
		return Outcome{}, fmt.Errorf("%w: %d replicas", ErrInvalid, n)
	}
	if err := r.Policy.check(); err != nil {
		return Outcome{}, err
	}
	agg := r.Aggregator
	if agg == nil {
		agg = Majority{}
	}

	tctx := ctx
	if r.Timeout > 0 {
		var cancel context.CancelFunc
		tctx, cancel = context.WithTimeoutCause(ctx, r.Timeout, ErrDeadline)
		defer cancel()
	}
	rctx, cancel := context.WithCancelCause(tctx)
	defer cancel(nil)

	results := make(chan result, n) // never blocks a replica
	for i := range n {
		go func() { results <- result{i, replica(rctx, i)} }()
	}

	votes := make([]Vote, n)
	got := 0
	record := func(res result) {
		if res.vote.Label == "" {
			res.vote.Label = LabelError
			res.vote.Reason = "consensus: replica returned an empty label"
		}
		votes[res.replica] = res.vote
		got++
	}
	var (
		stop      error // why Run stopped waiting; nil when every vote came
		mark      Label // the label of the replicas cut short
		abandoned bool  // ctx was done
	)
	expire := func() { // rctx is done: the deadline passed, or ctx is done
		if ctx.Err() != nil {
			stop, mark, abandoned = context.Cause(ctx), LabelCancelled, true
		} else {
			stop, mark = ErrDeadline, LabelTimeout
		}
	}
	for got < n && stop == nil {
		select {
		case res := <-results:
			if rctx.Err() != nil {
				expire() // it lost the race with the deadline: late
				votes[res.replica] = cutVote(res.vote, mark, stop)
				break
			}
			record(res)
			for range len(results) { // and every vote already in
				record(<-results)
			}
			if got < n && agg.Decided(votes, r.Policy) {
				stop, mark = ErrDecided, LabelCancelled
			}
		case <-rctx.Done():
			expire()
		}
	}
	if stop != nil {
		cancel(stop)
		r.cutShort(results, votes, mark, stop)
	}

	out, err := agg.Aggregate(votes, r.Policy)
	if abandoned {
		return out, &OutcomeError{Outcome: out, Err: fmt.Errorf("consensus: run stopped: %w", stop)}
	}
	return out, err
}

// result is the vote of one replica.
type result struct {
	replica int
	vote    Vote
}

// cutVote is the record of vote v of a replica that returned after Run
// stopped waiting: v itself when it is a cast vote (the replica answered),
// else label mark, stop as its reason, and only v's Session and Latency.
func cutVote(v Vote, mark Label, stop error) Vote {
	if v.Label != "" && v.Label != LabelCancelled && !v.Label.Failed() {
		return v
	}
	return Vote{Session: v.Session, Label: mark, Latency: v.Latency, Reason: stop.Error()}
}

// cutShort records the replicas that had not voted when Run stopped
// waiting, as cutVote does. It waits for them to return; under Abandon it
// waits no longer than Grace, and records the replicas still running then
// without Session or Latency.
func (r *Runner) cutShort(results <-chan result, votes []Vote, mark Label, stop error) {
	pending := 0
	for _, v := range votes {
		if v.Label == "" {
			pending++
		}
	}
	for ; pending > 0 && len(results) > 0; pending-- { // those already back
		res := <-results
		votes[res.replica] = cutVote(res.vote, mark, stop)
	}
	if pending == 0 {
		return
	}
	var expired <-chan time.Time
	if r.Abandon {
		t := time.NewTimer(r.Grace)
		defer t.Stop()
		expired = t.C
	}
	for ; pending > 0; pending-- {
		select {
		case res := <-results:
			votes[res.replica] = cutVote(res.vote, mark, stop)
		case <-expired:
			for i, v := range votes {
				if v.Label == "" {
					votes[i] = Vote{Label: mark, Reason: stop.Error()}
				}
			}
			return
		}
	}
}
