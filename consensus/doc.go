// Package consensus turns the votes of a job's replicas into one outcome:
// the winner, the agreement among replicas, a confidence score, and what to
// do when replicas disagree or fail. It also runs the replicas: Runner fans a
// job out, stops as soon as the outcome is decided, and cancels the rest.
//
// Aggregation is pure (no clock, context or goroutines) and imports no other
// package of this module. It implements the consensus block of version 3 of
// the delegation and validation interface: replicas 1, 3 or 5 (the package
// accepts any count from 1), the majority and weighted strategies, the
// numeric strategies median and median_of_means (Median, MedianOfMeans:
// answers that hold numbers, ParseNumber, agreeing within a Tolerance;
// model_ensemble is reserved: For reports ErrNotAvailable), and the
// disagreement policies return_all, fail_hard and best_effort.
//
// # Votes
//
// Each replica reports a Vote whose Label is one of three kinds:
//
//	kind       labels                                      counts as
//	cast       VALID, INVALID, TRUE, FALSE, OK, any other  a vote
//	failed     TIMEOUT, ERROR                              a non-vote, or negative evidence (Policy.Failures)
//	cancelled  CANCELLED                                   always a non-vote
//
// Cast votes agree when their labels are equal and their answers have the
// same Policy.Key; each set of agreeing votes is a group. Verdict-only votes
// leave Answer nil and are grouped by label. The default key, DefaultKey,
// compares answers as canonical JSON with key order ignored and the white
// space of strings trimmed and folded. Free text that says the same in other words
// can be grouped by meaning instead: GroupBySimilarity groups answers whose
// pairwise similarity reaches a threshold, and its Grouping's Key is the
// Policy.Key that counts them so (router/embedkey measures the similarity
// with embeddings).
//
// # Majority rules
//
//	rule            majority
//	winner          the largest group; on a tie, the group with the more
//	                cautious label (INVALID, FALSE < other labels < VALID,
//	                TRUE), then the group whose first vote comes first
//	failures        FailuresNonVotes (default): ignored. FailuresNegative:
//	                TIMEOUT and ERROR form one group, and when it is at least
//	                as large as the largest cast group there is no winner
//	no winner       no cast vote, or failures prevailing as negative
//	                evidence: Winner -1, Answer nil, Agreement 0,
//	                Confidence 0, LowConfidence; Label is the commonest
//	                failure label (CANCELLED if none failed)
//	replicas        the replicas launched, len(votes): answered, failed
//	                or cancelled
//	against         the cast votes outside the winning group, plus the
//	                failed votes under FailuresNegative
//	agreement       agreeing / (agreeing + against): the share of the
//	                votes backing the winner (2 of 3: 0.666…, 4 of 5: 0.8);
//	                cancelled replicas, and failed ones counted as
//	                non-votes, are in neither count, so a unanimous early
//	                quorum reads 1
//	verdicts        every replica's label, in replica order
//	confidence      Posterior(agreeing, against); 0 without a winner
//	disagreement    a cast vote outside the winning group, or under
//	                FailuresNegative a failed vote, or cast votes with no
//	                winner
//	low confidence  no winner, a disagreement, or agreeing*2 <= reported,
//	                where reported counts the replicas not CANCELLED
//
// # Confidence
//
// The confidence is the probability that the winner is the answer a
// majority of the panel would give, given the votes: with a uniform prior
// on the panel's share θ of the winning answer, θ follows
// Beta(agreeing+1, against+1) after the votes, and the confidence is
// P(θ > 1/2) (see [Posterior], which gives the closed form). One vote
// scores 3/4, two agreeing 7/8, a unanimous 3 15/16 and 5 63/64; 2 of 3
// scores 11/16, 4 of 5 57/64. Like agreement it depends only on the
// counts of the votes a response records, so anyone can recompute it from
// the verdicts. A replica cancelled before it answered is no vote: an
// early quorum of 3 of 5 scores like a unanimous 3. The replicas'
// self-reported confidence does not enter it (their calibration is
// unknown); it enters a weighted vote's weight only as far as its
// session's record shows it worth something ([Reliabilities.Evidence]),
// and Stop's lone-vote rule, where a host sets how much one answer's own
// confidence is worth.
//
// # Weighted confidence
//
// [Weighted] counts each vote with the log-odds of its session's
// reliability p, Weight(p) = log(p/(1-p)) (p clamped to [1/2, 0.999]),
// and states as confidence the probability that the winning answer is
// right: with a uniform prior over two answers and independent voters,
// Bayes' rule gives
//
//	confidence = exp(t·S_w) / (Σ_g exp(t·S_g) + [one group only])
//
// where S_g sums the weights of group g and the bracket adds exp(0) for
// the answer nobody voted for when every vote agrees ([Credence]). One
// vote of a session right 90% of the time states 0.9; two agreeing votes
// of 0.8 sessions 16/17; a split between equally reliable sessions 1/2.
// Votes whose errors go together carry less evidence than independent
// ones: t = Tempering(n, ρ) = 1/(1+(n-1)ρ) scales the n votes' weights by
// the design effect of their correlation ρ (Reliabilities.Correlation),
// which package reputation measures from how much more often sessions
// agree than their reliabilities predict. The outcome records every
// vote's weight and ρ, so that winner, agreement and confidence are
// recomputed from it alone.
//
// # Sequential calls
//
// [Stop] is the stopping rule of a call that launches runs in small
// batches and pools every vote into one outcome: it stops once
// Posterior(agreeing, against), or a weighted outcome's confidence,
// reaches its threshold (0.8 by default: two
// agreeing votes, or 3 of 4), never launches more than 5 runs, and
// reports a winner at the end only with a strict majority of at least two
// votes, or, weighted, with at least two votes and a confidence above one
// half.
//
// # Disagreement policies
//
// The cases of docs/INTERFACE.md (section 6.3), for each disagreement policy:
//
//	row                     return_all and best_effort      fail_hard
//	replicas agree          outcome, nil error              outcome, nil error
//	replicas disagree       outcome with the winner,        outcome and *OutcomeError
//	                        Disagreement, LowConfidence     wrapping ErrDisagreement
//	all replicas fail       outcome, Winner -1,             outcome and *OutcomeError
//	                        Confidence 0                    wrapping ErrAllFailed
//	some time out,          winner among the cast votes;    as the left column: no
//	failures as non-votes   no disagreement from timeouts   disagreement, no error
//	some time out,          timeouts are a competing        any timeout next to a cast
//	negative evidence       group; Disagreement             vote: ErrDisagreement
//
// return_all and best_effort yield the same Outcome, which holds both the
// winner and every vote; they differ in what a caller puts in its response
// (all replica results, or the winner with its evidence). The zero policy is
// best_effort.
//
// # Early quorum
//
// Aggregator.Decided reports whether the votes still to come can change the
// outcome. For majority, outside fail_hard, the leading group must stay
// strictly ahead even if every pending vote joins a rival (so 3 of 5 agreeing
// decides, and 2 of 3); under fail_hard two groups of answers already
// decide (the call fails whoever wins) and otherwise every replica must
// report, a failure included; outside fail_hard, under FailuresNegative,
// the failures count as a rival that wins ties.
// Decided settles the winner, not the figures: votes cut short before
// they answered are CANCELLED and count nowhere, while an answer that
// arrives after the decision (but before Runner.Run returns) is kept as
// cast, and counts against the winner if it dissents.
//
// # Runner
//
// Runner.Run starts the replicas, collects their votes by replica index,
// stops when the outcome is decided, the Runner's Timeout passes or the
// caller's context is done, cancels the replicas still running with a cause
// readable through context.Cause (ErrDecided, ErrDeadline or the caller's),
// and waits for them all before returning; with Abandon set, it waits only
// Grace for them, and abandons the replicas that ignore their context.
package consensus
