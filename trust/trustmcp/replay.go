package trustmcp

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
)

// AnswerStore keeps the tool results that settled payments bought, so
// that [Paywall] can deliver one again to a retry of the same call with
// the same payment, without running the tool or settling again. It holds
// a result as long as the replay record of its payment (until the
// authorization's validity ends). Implementations must be safe for
// concurrent use.
//
// The settlement and the call it paid for are recorded in the
// x402.ReplayStore (MarkSettled), and kept with the result: a payment
// whose result is kept is spent whatever the ReplayStore remembers, and
// an AnswerStore that outlives a restart beside a ReplayStore that does
// not (an x402.MemoryReplay) still answers its retry.
//
// Under keys of their own (the payment's key with a suffix), it also
// keeps what a payment's retry completes: the refusal of a gated tool,
// the result of an "auth-capture" payment while its capture is sent or
// pending, and the result of a tool that settles after it runs, kept
// before its payment is settled ([Paywall] settles nothing it could not
// keep) and read by the retry of a call whose settlement failed, which
// settles it again. A store keeps each as it keeps any answer; one that
// bounds what it holds should keep these apart from the results, as
// [MemoryAnswers] does, so that results do not push them out.
//
// Servers that share a ReplayStore between processes must share their
// AnswerStore too, or a retry that reaches another process than the first
// call is refused as "already used" (it is never charged twice). On
// PostgreSQL, vouch/pgstore has both: give the Paywall db.Replay() and
// db.Answers() of one pgstore.DB.
type AnswerStore interface {
	// Keep records answer, the JSON of a tool result bought by payer,
	// under key until the time until. A store that bounds what it holds
	// keeps each payer's answers apart from the others' by payer.
	Keep(ctx context.Context, key, payer string, answer []byte, until time.Time) error
	// Answer returns what Keep recorded under key, and false when nothing
	// is recorded or it has expired at now.
	Answer(ctx context.Context, key string, now time.Time) ([]byte, bool, error)
}

// Bounds of a [MemoryAnswers] whose members are zero.
const (
	// DefaultAnswersMaxEntries bounds the results kept in each budget.
	DefaultAnswersMaxEntries = 10_000
	// DefaultAnswersMaxBytes bounds the bytes of the results kept in each
	// budget.
	DefaultAnswersMaxBytes = 32 << 20
)

// answerOverhead is about what a kept result costs beyond its key, payer
// and JSON: its entry, its map slot and their headers.
const answerOverhead = 150

// MemoryAnswers is an AnswerStore in memory, for one server process.
// Its zero value is ready to use with the default bounds; it must not be
// copied after first use.
//
// It never keeps a result longer than MaxRetention, whatever the time
// Keep is asked to keep it until (Paywall refuses an authorization valid
// for longer than its MaxValidity, and a MemoryAnswers that would forget
// sooner, so that a retry never outlives what is kept of its payment).
// It holds five budgets, each of at most MaxEntries results and
// MaxBytes bytes: results, the refusals of gated tools ([ToolGate]),
// which no one paid for, the results held back by "auth-capture"
// captures the facilitator left unanswered, which may still be captured
// (a recovery sends them again), the results kept while their capture is
// sent, read only when the server stopped before it kept what the
// capture answered, and the results kept while their payment is settled
// (a tool that settles after it runs), which the retry of a call whose
// settlement failed settles again and delivers: a result kept once its
// payment settled drops the one kept under its key while it settled, so
// that this budget holds only settlements under way or failed. No result
// of one budget pushes out one of another: refusals never push out a
// result, none of them pushes out a held-back result, the only copy of
// what its capture may still buy, and results and refusals never push
// out a result whose settlement its retry may still make.
// Within a budget, payers are kept apart: when it is full, the results
// of the payer holding the most (the most results when their count is
// full, the most bytes when their bytes are over) are forgotten, the one
// expiring first each time, a payer's own first when it holds as much as
// any other: one payer's calls, however many, forget another's result
// only once it holds as much as that other, and a payer that holds none
// always has room for one. A result larger than MaxBytes is not kept:
// Keep fails. A retry of a payment whose result was forgotten or not kept
// is refused as already used, and never charged again; a held-back
// result forgotten (only other held-back results push one out) may
// still be captured, its retry refused; a result forgotten while its
// settlement failed (only other such results push one out) leaves its
// retry refused as already used, and the payment unsettled unless the
// facilitator settled it without answering. Expired results are dropped
// as new ones arrive.
type MemoryAnswers struct {
	// MaxEntries bounds the results kept in each budget; zero means
	// DefaultAnswersMaxEntries. Set it before first use.
	MaxEntries int
	// MaxBytes bounds the bytes of the results kept in each budget
	// (their keys, payers and JSON, and about 150 bytes a result for the
	// rest); zero means DefaultAnswersMaxBytes. Set it before first use.
	MaxBytes int64
	// MaxRetention is the longest a result is kept; zero means an hour,
	// the default of PaywallConfig.MaxValidity. Set it before first use.
	MaxRetention time.Duration
	// Now returns the current time, by which Keep bounds a result's
	// until by MaxRetention and drops expired results; nil means
	// time.Now. It is the clock Answer is given: [Paywall] sets a nil Now
	// to its [PaywallConfig].Now when it is built, so that a result
	// expires by one clock. Set it before first use.
	Now func() time.Time

	results, refusals, pending, capturing, settling fairstore.Store[[]byte]
}

// Keep implements AnswerStore.
func (s *MemoryAnswers) Keep(_ context.Context, key, payer string, answer []byte, until time.Time) error {
	maxEntries := cmp.Or(s.MaxEntries, DefaultAnswersMaxEntries)
	maxBytes := cmp.Or(s.MaxBytes, DefaultAnswersMaxBytes)
	retention := s.retention()
	size := int64(len(key)+len(payer)+len(answer)) + answerOverhead
	switch {
	case maxEntries < 0 || maxBytes < 0 || retention < 0:
		return fmt.Errorf("trustmcp: MemoryAnswers: a negative bound (MaxEntries %d, MaxBytes %d, MaxRetention %s)", s.MaxEntries, s.MaxBytes, s.MaxRetention)
	case size > maxBytes:
		return fmt.Errorf("trustmcp: MemoryAnswers: a result of %d bytes is larger than MaxBytes %d", size, maxBytes)
	}
	now := time.Now()
	if s.Now != nil {
		now = s.Now()
	}
	if limit := now.Add(retention); until.After(limit) {
		until = limit
	}
	budget := s.budget(key)
	budget.Put(now, fairstore.Entry[[]byte]{Key: key, Owner: payer, Value: bytes.Clone(answer), Until: until, Size: size}, maxEntries, maxBytes)
	if budget == &s.results {
		// Settled and kept: the result kept while it settled is no
		// longer read.
		s.settling.Delete(settlingKey(key))
	}
	return nil
}

// budget is the store of the results kept under key: refusals, pending
// captures, captures being sent and settlements being made apart.
func (s *MemoryAnswers) budget(key string) *fairstore.Store[[]byte] {
	switch {
	case strings.HasSuffix(key, refusedSuffix):
		return &s.refusals
	case strings.HasSuffix(key, pendingSuffix):
		return &s.pending
	case strings.HasSuffix(key, capturingSuffix):
		return &s.capturing
	case strings.HasSuffix(key, settlingSuffix):
		return &s.settling
	}
	return &s.results
}

// retention is s's MaxRetention, the default for zero.
func (s *MemoryAnswers) retention() time.Duration {
	return cmp.Or(s.MaxRetention, x402.DefaultMaxValidity)
}

// Answer implements AnswerStore.
func (s *MemoryAnswers) Answer(_ context.Context, key string, now time.Time) ([]byte, bool, error) {
	answer, ok := s.budget(key).Get(key, now)
	return bytes.Clone(answer), ok, nil
}

// Len returns the number of results held in the five budgets, expired
// ones included until a later Keep into their budget drops them.
func (s *MemoryAnswers) Len() int {
	return s.results.Len() + s.refusals.Len() + s.pending.Len() + s.capturing.Len() + s.settling.Len()
}

// Bytes returns the bytes counted against MaxBytes, in the five budgets.
func (s *MemoryAnswers) Bytes() int64 {
	return s.results.Bytes() + s.refusals.Bytes() + s.pending.Bytes() + s.capturing.Bytes() + s.settling.Bytes()
}

// paidCall names the call a payment pays for: a digest of its caller
// (as the tools name it to the trust service), the tool's name, its
// arguments (as canonical JSON) and the payment's payload. Only a repeat
// of that call may have its result delivered again: another integration
// sending the same payment is refused as a used one, as the HTTP doors
// keep a paid answer to the integration that bought it.
func paidCall(ctx context.Context, call *mcp.CallToolRequest, p *x402.PaymentPayload) string {
	d := sha256.New()
	caller := trust.CallerFrom(callerContext(ctx, call))
	for _, s := range []string{"mcp tools/call", caller, call.Params.Name, canonicalJSON(call.Params.Arguments), canonicalJSON(p.Payload)} {
		io.WriteString(d, strconv.Itoa(len(s))+":"+s)
	}
	return hex.EncodeToString(d.Sum(nil))
}

// canonicalJSON returns raw in jsonbody's canonical form; no arguments
// (nothing, or null) is {}.
func canonicalJSON(raw json.RawMessage) string {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		return "{}"
	}
	b, _ := jsonbody.Canonical(raw)
	return string(b)
}

// flight is a paid call running in this process: a retry with the same
// payment waits for its end rather than being refused while it runs or
// settles.
type flight struct {
	call string        // paidCall of the call
	done chan struct{} // closed when the call has returned
}

// startFlight notes that the call named call runs under key and returns
// it with true, or returns the call already running under key with false.
func (pw *paywall) startFlight(key, call string) (*flight, bool) {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	if f, ok := pw.flights[key]; ok {
		return f, false
	}
	if pw.flights == nil {
		pw.flights = make(map[string]*flight)
	}
	f := &flight{call: call, done: make(chan struct{})}
	pw.flights[key] = f
	return f, true
}

// endFlight ends the flight f under key.
func (pw *paywall) endFlight(key string, f *flight) {
	pw.mu.Lock()
	delete(pw.flights, key)
	pw.mu.Unlock()
	close(f.done)
}

// keep records the result ctr that payer bought with the settlement sr
// under key, before it is returned, so that a retry after losing it finds
// it. The settlement is recorded with the payment in the replay store,
// and kept with the result, with the call it paid for, in the answer
// store.
func (pw *paywall) keep(ctx context.Context, key, payer, call string, until time.Time, ctr *mcp.CallToolResult, sr *x402.SettleResponse) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pw.cfg.SettleTimeout)
	defer cancel()
	// The result is kept with its settlement and the call it paid for,
	// so that a retry can have it when the replay store has forgotten
	// the payment (one in memory, restarted).
	kept := *ctr
	kept.Meta = maps.Clone(ctr.Meta)
	if kept.Meta == nil {
		kept.Meta = mcp.Meta{}
	}
	kept.Meta[MetaPaymentResponse] = sr
	kept.Meta[metaPaidCall] = call
	answer, err := json.Marshal(&kept)
	if err == nil {
		err = pw.answers.Keep(ctx, key, payer, answer, until)
	}
	if err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: keeping the answer for a retry", slog.String("error", err.Error()))
	}
	// The settlement is recorded whether or not the answer was kept: it
	// happened, and a retry without a kept answer is refused as already
	// used either way.
	if err := pw.replay.MarkSettled(ctx, key, x402.SettledPayment{Request: call, Settlement: *sr}); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: recording the settlement", slog.String("error", err.Error()))
	}
}

// repeat answers a payment p of offer that was already accepted: with
// the result its first use bought when that use was settled for the same
// call and the result is kept; by settling it again when its result was
// kept before its settlement, which failed (completeSettling); and with
// the terms ("already used") otherwise.
func (pw *paywall) repeat(ctx context.Context, price x402.Price, res x402.ResourceInfo, p *x402.PaymentPayload, offer x402.PaymentRequirements,
	key, call string, now, until time.Time) *mcp.CallToolResult {
	sp, ok, err := pw.replay.LookupSettled(ctx, key, now)
	if err != nil {
		return pw.unavailable(ctx, "replay store", err)
	}
	var ctr *mcp.CallToolResult
	if !ok {
		// The replay store may have forgotten the payment (one in
		// memory, restarted) whose result the answer store kept.
		if ctr, sp, ok, err = pw.keptAnswer(ctx, key, now); err != nil {
			return pw.unavailable(ctx, "answer store", err)
		}
	}
	if !ok {
		// The first use may have stopped as it sent its capture, the
		// result kept before it (keepCapturing), or left it pending
		// (keepPending) before the replay store forgot the payment.
		for _, k := range []string{capturingKey(key), pendingKey(key)} {
			if b, ok, err := pw.answers.Answer(ctx, k, now); err == nil && ok {
				return pw.completePending(ctx, price, res, key, call, until, b)
			}
		}
		// Or its result was kept before its settlement, which failed, went
		// unanswered, or was cut short by a stop: this retry settles it.
		sc, settling, err := pw.keptSettling(ctx, key, call, now)
		if err != nil {
			return pw.unavailable(ctx, "answer store", err)
		}
		if settling {
			return pw.completeSettling(ctx, price, res, strings.TrimPrefix(res.URL, "mcp://tool/"), p, offer, key, call, until, sc)
		}
	}
	if !ok || sp.Request != call {
		return pw.refuse(price, res, msgUsed, nil)
	}
	if ctr == nil {
		answer, ok, err := pw.answers.Answer(ctx, key, now)
		if err != nil {
			return pw.unavailable(ctx, "answer store", err)
		}
		if !ok {
			if pending, ok, err := pw.answers.Answer(ctx, pendingKey(key), now); err == nil && ok {
				return pw.completePending(ctx, price, res, key, call, until, pending)
			}
			// Settled, but its result was not kept once it settled: the
			// one kept before its settlement is the result it bought.
			if sc, settling, err := pw.keptSettling(ctx, key, call, now); err == nil && settling {
				ctr = sc.Result
			}
		} else if kept := new(mcp.CallToolResult); json.Unmarshal(answer, kept) == nil {
			ctr = kept
		}
		if ctr == nil {
			return pw.refuse(price, res, msgUsed, nil)
		}
	}
	if ctr.Meta == nil {
		ctr.Meta = mcp.Meta{}
	}
	delete(ctr.Meta, metaPaidCall)
	ctr.Meta[MetaPaymentResponse] = &sp.Settlement
	pw.log.LogAttrs(ctx, slog.LevelInfo, "trustmcp: answer delivered again", slog.String("tool", res.URL),
		slog.String("transaction", sp.Settlement.Transaction), slog.String("payer", sp.Settlement.Payer))
	return ctr
}

// keptAnswer returns the result kept under key with the settled payment
// kept with it (see keep): the call it paid for and its settlement. It
// reports false when no result is kept, or one kept without them.
func (pw *paywall) keptAnswer(ctx context.Context, key string, now time.Time) (*mcp.CallToolResult, x402.SettledPayment, bool, error) {
	var sp x402.SettledPayment
	b, ok, err := pw.answers.Answer(ctx, key, now)
	if err != nil || !ok {
		return nil, sp, false, err
	}
	ctr := new(mcp.CallToolResult)
	if json.Unmarshal(b, ctr) != nil {
		return nil, sp, false, nil
	}
	sp.Request, _ = ctr.Meta[metaPaidCall].(string)
	settlement, settled := ctr.Meta[MetaPaymentResponse].(map[string]any)
	raw, err := json.Marshal(settlement)
	if sp.Request == "" || !settled || err != nil || json.Unmarshal(raw, &sp.Settlement) != nil {
		return nil, sp, false, nil
	}
	return ctr, sp, true, nil
}

// spent reports whether the answer store keeps an outcome of the payment
// under key (its result, or the refusal of a gated tool, or a capture
// pending or being sent of an escrowed one, or a result kept while its
// payment settles, of a tool that settles after it runs): a payment that
// a replay store which forgot it (one in memory, restarted) reserved as
// new, and which must be answered from what was kept, never verified or
// run again. A result kept while its payment settles is looked up
// whatever the tool that now receives the payment: it may have been kept
// by another tool, one that settles after it runs, whose retry may still
// settle the payment, and which no other tool may take for a new one. A
// failed look-up is logged, and the payment taken as new.
//
// A key that ends as the keys of those outcomes do (a nonce crafted to
// end in "#settling", say) is no payment's own: what is kept under it is
// another payment's, and the payment is taken as new, to be verified
// (and refused) as any other.
func (pw *paywall) spent(ctx context.Context, key string, gated, escrowed bool, now time.Time) bool {
	if outcomeKey(key) {
		return false
	}
	keys := []string{key, settlingKey(key)}
	if gated {
		keys = append(keys, refusedKey(key))
	}
	if escrowed {
		keys = append(keys, pendingKey(key), capturingKey(key))
	}
	for _, k := range keys {
		_, ok, err := pw.answers.Answer(ctx, k, now)
		if err != nil {
			pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: looking up the outcome of a new payment", slog.String("error", err.Error()))
			return false
		}
		if ok {
			return true
		}
	}
	return false
}

// outcomeKey reports whether key ends with a suffix under which the
// answer store keeps what a payment's retry completes.
func outcomeKey(key string) bool {
	for _, suffix := range [...]string{settlingSuffix, refusedSuffix, pendingSuffix, capturingSuffix} {
		if strings.HasSuffix(key, suffix) {
			return true
		}
	}
	return false
}

// metaPaidCall is where a kept result names the call it paid for
// (paidCall); it is removed before the result is delivered.
const metaPaidCall = "vouch/paid-call"

// msgUsed is the reason of a refused payment that was accepted before.
const msgUsed = "the payment was already used"
