// Package reputation keeps what a host has learned about how reliable each
// session is: how often its vote matches the settled outcome of the calls
// it ran in.
//
// A host starts with [New] over a [Store] (nil for one in memory; package
// pgstore's or reputation/boltstore's to keep it), hands the [Book] to
// its engine (router.WithReputation), and reports the outcomes it learns
// (trust.Service.Feedback and FeedbackVerdict, or POST /api/v4/feedback);
// the engine then weighs, selects and calibrates by what the Book holds.
// The Book example shows what a few reports do to a tally; the sections
// below say what each figure is, so that anyone recomputes it.
//
// # Records
//
// A [Record] holds two counts for one [Key] (a session, and optionally the
// operation and kind of claim it judged): Right, the evidence that the
// session's votes were right, and Wrong, the evidence that they were
// wrong. A host's report that a call was decided right or wrong adds
// whole units (or more, see [Book]); agreement alone adds nothing unless
// the host asks for it (Options.LearnFromAgreement), and then counts are
// real numbers: a vote that matched an outcome settled with probability
// 0.9 adds 0.9 to Right and 0.1 to Wrong.
//
// The reliability read from a record is the mean of a Beta distribution:
// the record's counts added to a [Prior] of pseudo-counts,
//
//	reliability = (Right + Prior.Right) / (Right + Wrong + Prior.Right + Prior.Wrong)
//
// so a session never seen reads exactly the prior's mean
// ([DefaultOutcomePrior]: Beta(32, 8), a mean of 0.8, worth 40 votes or
// ten reported outcomes; [DefaultPrior], Beta(4, 1), for a Book that also
// learns from agreement), neither trusted nor shunned.
//
// # Decay
//
// A record forgets by evidence, not by time: when Right + Wrong would
// exceed a horizon H, both counts are scaled down so that they sum to H.
// Once a record is full, each further unit of evidence therefore weighs
// the old ones by H/(H+1): an exponentially weighted average over about
// the last H votes ([DefaultHorizon], 500). A session that was bad and got
// better earns its new record within a few hundred runs, however much
// history it has. Decay needs no clock, so a record is a function of the
// evidence added to it, in order. A session whose worker changed is
// better forgotten than left to decay: at 5% of outcomes, a leader that
// turned into the worst judge keeps its lead for hundreds of calls.
// [Book.Forget] forgets a session in one scope; [Book.Identify], given a
// description of each session's worker as a host starts, forgets in
// every scope a session whose worker is not the one recorded. A longer horizon (Options.Horizon)
// reads reliabilities on more outcomes and follows a changed session
// more slowly: on real panels that never change, 2,000 votes met the
// accuracy target on 150 world-sequences of 330 where 500 met it on 136,
// and followed a panel whose best and worst sessions swapped a little
// more slowly (docs/ACCURACY.md, Variants).
//
// # Who teaches
//
// A Book learns whatever it is given; the host decides whose calls teach
// it. router.Engine and trust.Service teach it the calls of the host and
// of callers that answer for theirs (an accepted credential, a payment),
// never trial or anonymous calls (router.Teaches), and take a report on
// a call from its caller only, once per call ([Ledger.Report]) and within
// the Book's report window after it (Options.ReportWindow): one call
// moves a session's record by at most one vote, and its reported outcome
// by at most FeedbackWeight. One caller is bounded too
// (router.WithCallerShare): over an engine's latest calls that teach, a
// caller above half of them while others teach is thinned so that it
// supplies no more than half of the evidence, and its reports alike; a
// caller alone teaches fully.
//
// # Calibration
//
// A reliability says how often a session's vote is right; it cannot see
// a mistake the whole panel shares. What a host learns afterwards can:
// [Ledger.Report] counts each reported outcome in a [Calibration] map, one
// per operation and tier (the host names the maps: trust.Service keeps
// one per tier and verdict), by the call's score, the confidence it
// computed before calibration (the router's weighted confidence), with
// its conservative number, what it stated with no outcome
// (consensus.Conservative, never above an unweighted count). Each of
// [CalibrationBins] bins of the score reads a Beta posterior rate,
// (right + k·m)/(outcomes + k), with a prior of k pseudo-outcomes
// centred on m, the bin's mean conservative number; adjacent bins that
// violate monotonicity are pooled; a score
// is read on the line between the points around it. With no outcome the
// calibrated confidence is the conservative number, and it moves to what
// outcomes show. [Book.Calibrate] returns the number and its [Basis],
// both numbers and the points it was read between, so that anyone
// recomputes it ([Basis.Read], [Interpolate]). The map's counts are
// records of the panel under reserved kinds ("calibration <tier> <bin>"),
// so every Store keeps them and servers sharing one calibrate together.
//
// # Confidence slopes
//
// A reliability says what a session's vote is worth on average; the
// confidence a vote reports may say which of its votes are worth more.
// [Book.Learn] and [Ledger.Report] also keep, per session and operation,
// the running moments of x, the log-odds of each vote's reported
// confidence (consensus.Logit), and of y, the probability that the vote
// was right: from agreement, the credence the call's other votes give
// its answer (never its own vote); from a reported outcome, 0 or 1 with
// FeedbackWeight votes' worth. [Book.Evidence] reads from them one
// slope per session, the logistic slope of being right on x by moments,
//
//	β = Cov(x, y) / (Var(x)·ȳ(1−ȳ)) · n/(n+SlopePrior)
//
// clamped to [0, MaxSlope], and the centre x̄, and returns them in
// consensus.Reliabilities.Confidence: a vote then weighs its record's
// Weight moved by β·(x − x̄) (consensus.Reliabilities.Evidence). A
// session whose confidence never varies (a constant 0.5), or does not
// go with being right, has β = 0 and weighs its record alone. The
// moments are records of the session under reserved kinds
// ("confidence u", "confidence uu", "confidence y", "confidence uy"),
// x kept as u = (x+L)/(2L) in [0, 1], L = consensus.Weight(
// consensus.MaxReliability), so that every Store keeps them and a
// horizon scales the four alike.
//
// # Leaders
//
// A weighted tally can still follow a clique: four sessions that share
// their mistakes outvote the one that is right. A reported validation
// therefore also scores each session against the majority of the call's
// other votes: where the two gave different verdicts, a disagreement won
// by whichever was right (a vote for the other verdict is
// [Ballot.Opposed]). [Book.Leader] names the session whose record, a
// [Lead], passes a one-sided sign test at the Book's Options.LeadLevel
// ([DefaultLeadLevel], 1/8, unless the host sets it) and whose
// reliability is the highest: run alone, it answers better than the
// others together. A session whose reliability stands at least
// Options.LeadMargin ([DefaultLeadMargin], 0.05) above every other
// session's passes at 1/2 instead, once it has won two disagreements or
// more: its outcomes already rank it first, and its record need only
// show it right more often than the others' majority where the two
// differ. trust.Service's adaptive tier then runs it alone. The
// records are kept under the reserved kind "lead <kind>" of the scope's
// operation, in every Store.
//
// The test is checked after every report, and takes three disagreements
// won in three, five in six, seven in nine or eight in eleven. A session
// that wins 93% of its disagreements passes after three of them on the
// median, one that wins 70% after nine (58% of the time within nine),
// one that wins 60% after 18; one no better than the others passes
// within 20 by luck 27% of the time, which the reliability check bounds
// ([Lead.PValue]'s example computes these figures). A disagreement counts only where the
// session and others ran on a reported call, so a host that reports few
// outcomes waits long for a lead; trust.Service therefore examines each
// reported claim on its pool (asked again at the oracle tier, reported
// with the same verdict), which shows more of them. At a LeadLevel of 1/2 a record
// leads once it has won more disagreements than it lost: the session
// that the reports so far show right more often than the others'
// majority. Every session then passes sooner, one no better than the
// others too (within nine disagreements 75% of the time), and only the
// reliability check and its later losses end such a lead. Adaptive runs
// fewer sessions, and a good session a few points weaker than the best,
// or than the majority of a strong panel, leads more often
// (docs/ACCURACY.md, *The lead's level*, measures both). The margin
// keeps 1/2 for the session the outcomes set apart: on real panels of one
// strong judge among weaker ones it leads sooner, and on panels of
// similar strength, whose reliabilities seldom part by 0.05 on a few
// reports, the level stays 1/8 (docs/ACCURACY.md, *The lead's level*).
// Two wins at least: under the default Prior one report on which a
// session alone was right puts it 0.09 above the sessions it proved
// wrong, and one report never makes a leader.
//
// # Coincidence
//
// Two wrong answers to an open question (a number, a grouped text)
// seldom coincide. [Book.Coincidence] is how often they do in a scope,
// the chance consensus.PluralityPosteriorAt states a plurality with, and
// [Book.Learn] learns it from the answers of every call that splits,
// though no call says which were wrong: one step of
// expectation–maximisation per call. Each hypothesis of which group of
// equal answers is right, or that none is, weighs its posterior at the
// figure before the call (which Learn reads, and [Book.LearnAt] is
// given by a caller that read it with the call) and the runs' mean
// reliability;
// under it the w answers it calls wrong, in g groups, took w − g
// coincidences in w − 1 chances. The expected coincidences add to Right
// and the other chances to Wrong, over [DefaultCoincidencePrior]. So four
// equal answers beside one other are counted too, though they win. A
// call whose answers all agree teaches nothing: only the reliability
// tells its answer from a coincidence of wrong ones, and the chance of
// such a call grows with the coincidence, so a panel that always agreed
// would read it ever higher. The counts are the panel's record under
// the reserved kind "coincidence <kind>".
//
// # One read per call
//
// A call that needs several of these figures reads them at once:
// [Book.Snapshot] returns the reliabilities, the leader, the calibration
// maps and the coincidence a [SnapshotRequest] names from one
// [Store.Load], each the figure its own method returns on the same
// records.
//
// # Stores
//
// A [Store] keeps records. Writers never read, modify and write a record
// themselves: [Store.Add] applies deltas atomically, as [Record.Add] does,
// so any number of engines sharing one store (one database behind N
// servers) learn together and lose nothing. [Memory] is the in-process
// store; package reputationtest holds the test suite every Store passes.
package reputation
