// Package trust is the service an agent calls before it acts on AI work: it
// delegates a task, validates a claimed result or arbitrates a dispute under
// a policy tier, and answers with a status, a confidence, evidence, retry
// instructions and, on request, a receipt.
//
// A [Service] runs on any router.Service: the in-process router.Engine or
// a remote router.Client. [NewHandler] serves any [Caller] over HTTP and
// [Client] calls a remote one.
//
// The task's JSON members (claimed_result, spec, dispute_context) are
// json.RawMessage: write a plain value with [JSON], as in
// trust.Task{ClaimedResult: trust.JSON("Paris")}. A validation's workers
// read the task's input, spec and dispute context as the router.Job
// members TaskInput, TaskSpec and DisputeContext. [Request.Validate]
// holds each mode to the members it uses: a delegation's input must hold
// something (not "", {} or an array form without items), and a claimed
// result in a delegation or a dispute context outside an arbitration is
// refused by name rather than ignored. The package example
// runs a whole call on the host's own workers, with a signed receipt
// verified afterwards.
//
// # Routes
//
// The interface leaves the path of the trust call open: [NewHandler]
// serves it at POST /api/v4/trust, with a trial variant at
// /api/v4/trial/trust and an x402 variant at /api/v4/x402/trust, placed as
// the router's variants are (docs/INTERFACE.md, section 9, has the whole
// wire contract); with [WithReceiptEndpoints] it also serves GET
// /api/v4/receipt/{receipt_id} and POST /api/v4/verify_receipt. It
// authenticates, limits, deduplicates and fails exactly as router.Handler
// does, and names the authenticated caller to the Service with
// [WithCaller], so that the caller owns the call's receipt.
//
// # From tier to router calls
//
// Each policy tier maps to router version 3 calls, as data in the code:
//
//	policy    router tier       replicas          disagreement_policy   calls
//	fast      fast              1                 best_effort           1
//	safe      safe              3                 best_effort           1
//	oracle    oracle            5                 fail_hard             1
//	adaptive  fast, safe, then  1 per call, at    best_effort           1 to 5
//	          oracle            most 5 in all
//
// With [WithSingleSession], fast calls the version 2 endpoint on that
// session instead, and adaptive runs first there. Delegation calls
// /api/v3/delegate; validation and arbitration call /api/v3/validate, the
// claimed result as the claim and the task's input, spec and dispute
// context in the claim's context.
//
// # Adaptive: one pooled, sequential decision
//
// Adaptive runs a job on one session at a time (or two at once where two
// are needed), each run a version 3 call of one replica whose
// session_pool names one session the call has not used yet, and pools
// every vote it collects into one tally. It stops as soon as
// consensus.Stop says the outcome is settled. Over a router that keeps
// reputation (router.Engine, by default) the votes are weighted by the
// sessions' learned reliabilities, the candidates are ranked by a draw
// from each reliability (router.Engine.Order; the call reads the
// reliabilities, its leader, its calibration maps and, for an open
// answer, the coincidence of wrong answers in one store read,
// reputation.Book.Snapshot), a validation whose scope
// has a leader (reputation.Book.Leader: a session whose reported
// outcomes show it right where the other votes were wrong, with
// significance) runs the leader alone and reports its verdict
// (Evidence.Leader; one such call in four also runs a check beside it,
// whose vote teaches and does not count, WithLeaderCheck). A validation
// that ends with one session's verdict alone against four or more that
// agree answers that session's verdict when its record of such
// disagreements shows it right in more than half of them, with a chance
// of at least 0.8, and states its expected share of them (the dissent
// rule, Evidence.Dissent): where weak judges agree, their mistakes go
// together. Otherwise the call settles once at least
// two agreeing runs give a confidence of [DefaultWeightedStopThreshold]
// (calibrated on the outcomes reported for adaptive calls once there are
// any, else weighted), or once the chance that the runs left turn the
// verdict is below [DefaultFlipBound] (consensus.Stop.Flip), so that a
// panel too weak to reach the threshold does not run five for nothing;
// its pooled votes teach the router's book. Otherwise ([WithoutReputation]) it settles once the posterior
// chance that the leading answer is the panel's majority
// (consensus.Posterior) reaches 0.8, which two agreeing runs do, and 3 of
// 4; or, when the host
// sets an escalation threshold ([WithEscalationThreshold]; none by
// default), a single run that reported a confidence of at least that.
// Each batch is as large as the fewest runs that could settle the call:
// two at once to start (one when a single run may settle it), then one
// when a failure left a single answer, two after a split, one after 2–2.
// It never launches more than 5 runs (oracle's count). The interface has
// adaptive start with one replica; by default it starts with two at once,
// because one run alone never settles it, which saves a round trip and
// costs nothing. Run i asks for router tier fast (i = 0),
// safe (1, 2) or oracle (3, 4), falling back to any unused session when
// none serves that tier.
//
// A run that fails (TIMEOUT, ERROR, or a router error other than a refusal
// of the request: 400, 401, 402, 403) is a failed vote, and adaptive goes
// on while sessions remain. When it stops without settling, it reports a
// winner only with a strict majority of at least two answers (3 of 5, say)
// or, with reputation on, a weighted winner of at least two answers whose
// weighted (or calibrated) confidence is above one half, the call having
// stopped because the runs left could not turn it (consensus.Stop.Accept;
// at one half or below it runs once more while runs are left); otherwise
// it answers RETRY with retry instructions, never an unsettled single-run
// verdict.
//
// A delegation (not judged) is decided once adaptive stops by the
// plurality rule instead ([WithPluralityFloor]): VALID when at least two
// runs back the winner and the confidence stated is above
// [DefaultPluralityFloor], one half, so that no answer the service states
// as a coin flip or worse is VALID; RETRY otherwise, with the winner, its
// confidence and a reason naming both. With reputation off that is the
// strict majority; with reputation on the winner is the answer most runs
// gave, stated with the calibrated consensus.Posterior of its counts, so
// that a plurality short of a majority is VALID once reported outcomes
// show such answers right more often than not. A delegation whose winner
// holds no strict majority runs once more while runs are left.
//
// The candidate sessions are those of [WithSessionPool], or else the
// sessions the router reports through router.StatusReporter, less those
// cooling down: for the in-process router.Engine a read of its state, for
// a remote router.Client one GET /api/v1/status per adaptive call, which
// is the cost of excluding used sessions. A router that reports none
// leaves the choice to the router, and a run on a session already used is
// counted as a failed run (not an independent vote).
//
// # The tally
//
// Every tier reports from the same vote accounting: the runs of every
// router call it made, counted by package consensus's majority (failures
// are no votes, runs cancelled before they answered by an early quorum are
// no votes at all, and delegation outputs agree under [WithAnswerKey]).
// Failed runs are no votes whatever the router's failure mode
// (router.WithFailureMode): over a router that counts them as negative
// evidence, the receipt's consensus_snapshot of a fast, safe or oracle
// call copies the router's block, whose agreement and confidence count
// them against the winner and whose failures member says so
// ("negative_evidence"), while the decision counts them as no votes; each
// block is the documented function of the runs the receipt records.
// confidence is the weighted confidence of the tally over a router that
// keeps reputation (consensus.Weighted on the reliabilities each run
// records), else consensus.Posterior of the tally; evidence.agreement the
// share of the answers that back the winner, evidence.verdicts every
// run's label, evidence.disagreements every run that answered otherwise or
// failed, and evidence.launched, answered, cancelled and failed count the
// runs (evidence.redundancy equals launched). Each tier accepts the
// winner on its own terms:
//
//	fast      the one answer
//	safe      a strict majority of at least two answers, or (reputation
//	          on) a weighted winner, among two answers or more or beside
//	          runs the router cancelled once the weights settled the
//	          call, whose calibrated confidence is above one half (never
//	          one answer whose other runs failed): once reported
//	          outcomes show that one session outweighing two that
//	          agree (or the most reliable of three different answers)
//	          is right more often than not
//	oracle    a majority of its 5 replicas answered and none dissented
//	          (fail_hard: any dissent answers RETRY)
//	adaptive  settled, or a strict majority of at least two answers;
//	          a delegation, at least two runs stating a confidence above
//	          the plurality floor
//
// # Status
//
// An accepted winner decides the status:
//
//	mode         VALID            INVALID            otherwise
//	validation   VALID            INVALID            RETRY (NEEDS_SPEC when that wins)
//	arbitration  SELLER_VALID     SELLER_INVALID     INCONCLUSIVE
//	delegation   VALID (an accepted result)            RETRY, with the best-effort result if any
//
// An oracle call whose replicas disagree (fail_hard) is not an error to
// the caller: it answers RETRY, or INCONCLUSIVE for arbitration, with the
// per-replica evidence. retry_instructions is set for RETRY (why, when,
// and the stronger tier to retry with, or the same tier with more time
// when runs ran out of time) and NEEDS_SPEC (what is missing), and null
// otherwise.
//
// # Free-text delegations
//
// Delegation outputs agree, by default, only when they are equal under the
// answer key ([WithAnswerKey]; canonical JSON with the white space of
// strings folded): a false agreement is worse than a false disagreement.
// Two ways settle free text, which no two models word alike, by what it
// says (docs/INTERFACE.md, 9.4):
//
//   - Judged: a request whose Delegation asks for [AgreementJudged] has
//     one session produce a candidate answer and the other sessions judge
//     it, as a validation of the same tier whose claimed result is the
//     candidate (never on the session that produced it). The answer the
//     judges accept is the result, with the validation's confidence; a
//     second candidate is produced only when the first is rejected, and
//     adaptive judges as it validates (two judges at once to start, then
//     one or two until settled), so that an answer the first two judges
//     accept costs three runs (a fourth while the sessions' reliabilities
//     are still the prior). [Evidence.Judging] and the receipt's reasons
//     say which runs produced and which judged.
//   - Grouped: a service built [WithGrouper] regroups every delegation's
//     outputs by meaning before counting them (router/embedkey groups by
//     the cosine similarity of embeddings), and [Evidence.Grouping]
//     records the grouping, each pair's similarity and the threshold.
//
// # Receipts
//
// With [WithSigningKey] (or [WithSigningKeyFile], or [WithReceipts] for a
// whole receipt.Issuer), a request whose receipt block asks for one (mode
// inline or detached; receipt.Inline() asks for an inline receipt with
// every optional member) gets a receipt of the decision, following the
// lifecycle the interface sets out: the decision, then the receipt built from what
// really ran (the consensus block of a one-call tier, or adaptive's pooled
// tally in the same shape, with replicas the runs launched; the hashes of the
// input and of the chosen result, and the sessions, task ids and trace id
// of every step, each as the include flags ask), signed when the issuer
// has a signer, stored, and returned whole (inline) or as its receipt_id,
// ttl, visibility and expiry (detached). Without a receipt block, or with
// mode none, nothing is built or stored and the response has no receipt
// member; a block that asks for no receipt yet sets other members is
// refused, naming receipt.mode, since they would go unused. The caller
// named by [WithCaller] owns the receipt; shared receipts may also be
// fetched by the counterparties the block names (refused with private
// visibility, named once). A
// decision whose receipt cannot be stored is answered 503, never without
// the receipt it asked for. A ttl or visibility beyond what the receipt
// environment grants is narrowed, not refused: the receipt records the
// effective values and the response's receipt_clamped says which were
// narrowed and why ([ReceiptClamp]).
//
// Every receipt a logging store keeps (receipt.MemStore, boltstore,
// pgstore) is also a leaf of its transparency log; [WithReceiptLog]
// serves the log's checkpoint, a receipt's inclusion proof and
// consistency proofs beside the receipt endpoints (see receipt.Log).
//
// # Outcomes
//
// What a host learns afterwards (an audit, a dispute, a review) teaches
// the router's reputation and calibrates the confidence later calls
// state: [Service.Feedback] reports that a call's answer turned out right
// or wrong, and [Service.FeedbackVerdict] that a validation's claim held
// or not, whatever the call answered, so that a call that answered RETRY,
// whose votes show who was right all the same, teaches too. Either names
// the call by its trace_id or its receipt's receipt_id, for its caller
// only, and counts once, within the book's report window after the call
// (reputation.Options.ReportWindow, 400 days by default; a later report
// is ErrUnknownCall). POST /api/v4/feedback ([FeedbackRequest]) takes
// both over HTTP.
//
// A report on a validation also examines its claim: the service asks it
// again of the pool at the oracle tier and reports the same true verdict
// on that exam, so that
// one report teaches the sessions the call did not run, and scores each
// against the others' majority (reputation.Lead), which is how a session
// comes to lead. A session both calls ran learns the claim's outcome
// once, and its disagreement with the others counts once
// (reputation.Call.Again). On real panels where one strong judge sits among
// near-chance ones, the call alone seldom shows that judge disagreeing
// with the others; the exam does (docs/ACCURACY.md measures both). The
// exam counts votes as one oracle call of five replicas would, stopped
// once two disagree, for fewer runs: it asks the sessions in an order
// drawn at random (the order in which a call's replicas arrive, not
// their ranking), one at a time, and it does not ask a session the call
// ran again: the verdict that session gave counts, as it was cast. On
// the real panels of docs/ACCURACY.md an exam asks about three runs,
// where the oracle call launched five; asked one after another, they
// may take longer than the oracle call's slowest run, and the report
// waits for them. An exam runs once per
// call, reported by trace id or receipt id, while the service remembers
// the call (its latest 10,000 calls that teach); a repeat of the report
// runs none, and the opposite verdict replaces the
// exam's report as it replaces the call's. A report made through the
// router.Engine itself, or by receipt id on a call the service no longer
// remembers (or whose trace id the caller reused for a later call),
// examines nothing, and a router that can never serve the oracle tier (fewer than
// five sessions) runs no exam. Its runs are the host's: the caller is
// not charged. [WithoutExams] turns exams off.
//
// Services whose routers share one reputation store and whose issuers
// share one receipt store (servers on one database) share what reports
// teach, but each remembers only the calls it served: another service
// knows a call by its receipt_id, not its trace_id, and never examines
// it, so the opposite report made there replaces the call's report and
// leaves the exam's standing.
//
// trace_id is the W3C trace id of the incoming request when there is one,
// otherwise a new one; the router calls carry it. When the call is traced
// ([WithTelemetry]) it is the trace id of the call's span. service_version
// is [Version].
package trust
