package main

import (
	"context"
	"errors"
	"expvar"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/agentcard"
	"github.com/vouchkit/vouch/x402"
)

// defaultCallIDs is how many call ids the executions are counted by
// unless -debug-call-ids says otherwise: the latest ids seen, the oldest
// forgotten first, their text at most callIDBytes an id (about 9 MiB in
// all at most).
const defaultCallIDs = 1 << 16

// metrics are the server's counters, served at /debug/vars on -debug-addr
// in expvar's format. They belong to one server: nothing is published in
// expvar's process-wide registry, so run can be called twice in a process.
type metrics struct {
	started     time.Time
	calls       expvar.Map // requests by route ("POST /api/v3/validate")
	responses   expvar.Map // responses by HTTP status
	executions  expvar.Int // worker executions
	bySession   expvar.Map // worker executions by session id
	settlements expvar.Int // x402 payments settled
	callIDs     callCounts
}

// newMetrics returns the counters of a server that counts executions by
// the latest callIDs call ids.
func newMetrics(callIDs int) *metrics {
	m := &metrics{started: time.Now(), callIDs: callCounts{limit: callIDs}}
	m.calls.Init()
	m.responses.Init()
	m.bySession.Init()
	return m
}

// vars returns the variables of /debug/vars, by name.
func (m *metrics) vars() map[string]expvar.Var {
	return map[string]expvar.Var{
		// memstats is as expvar publishes it. expvar's cmdline is left
		// out: the command line holds API keys and the database URL.
		"memstats": expvar.Func(func() any { var s runtime.MemStats; runtime.ReadMemStats(&s); return s }),

		"goroutines":                   expvar.Func(func() any { return runtime.NumGoroutine() }),
		"uptime_seconds":               expvar.Func(func() any { return int64(time.Since(m.started).Seconds()) }),
		"calls":                        &m.calls,
		"responses":                    &m.responses,
		"worker_executions":            &m.executions,
		"worker_executions_by_session": &m.bySession,
		"executions_by_call_id":        expvar.Func(func() any { return m.callIDs.snapshot() }),
		"call_ids_forgotten":           expvar.Func(func() any { return m.callIDs.forgottenCount() }),
		"call_ids_limit":               expvar.Func(func() any { return m.callIDs.limit }),
		"x402_settlements":             &m.settlements,
	}
}

// ServeHTTP serves the variables as expvar.Handler does: one JSON object,
// members in name order. With the query gc=1 it collects garbage first, so
// that the heap figures of memstats count live memory only. Any other
// query (gc=true, a misspelt GC=1) is a 400 naming the parameter, never
// served as no collection.
func (m *metrics) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	gc, err := collectFirst(r.URL.RawQuery)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if gc {
		runtime.GC() // so that memstats counts live memory only
	}
	vars := m.vars()
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	slices.Sort(names)
	var b strings.Builder
	b.WriteString("{\n")
	for i, name := range names {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, "%q: %s", name, vars[name].String())
	}
	b.WriteString("\n}\n")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write([]byte(b.String()))
}

// collectFirst reads the query of /debug/vars: none, or gc=1 once.
func collectFirst(rawQuery string) (bool, error) {
	q, err := url.ParseQuery(rawQuery)
	if err != nil {
		return false, errors.New(`(query): is not name=value pairs joined by "&"; /debug/vars takes gc=1 or nothing`)
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if name != "gc" {
			return false, fmt.Errorf("%s: is not a parameter of /debug/vars, whose one parameter is gc=1", name)
		}
	}
	if vals, ok := q["gc"]; ok && (len(vals) != 1 || vals[0] != "1") {
		return false, fmt.Errorf("gc: must be 1, given once, to collect garbage first (leave it out for no collection), got %q", vals)
	}
	return q.Has("gc"), nil
}

// debugHandler serves GET /debug/vars.
func (m *metrics) debugHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("/debug/vars", m)
	return mux
}

// countRequests counts each request by route and each response by
// status. Routes are named by their pattern; a path the server does not
// serve counts as "other", so the map stays small whatever is requested.
// also names the routes, as "METHOD /path", that the server serves only
// as its flags say (the offline facilitator's).
func (m *metrics) countRequests(next http.Handler, also ...string) http.Handler {
	known := map[string]bool{}
	for _, route := range also {
		known[route] = true
	}
	for _, rt := range router.Routes() {
		known[rt.Method+" "+rt.Path] = true
	}
	for _, p := range []string{trust.CallPath, trust.TrialCallPath, trust.X402CallPath, trust.FeedbackPath, receipt.VerifyPath, mcpPath, mcpMessagesPath, a2aPath, a2aAPIPath} {
		known["POST "+p] = true
	}
	for _, p := range append([]string{receipt.LogPath, receipt.ConsistencyPath, healthzPath, readyzPath}, agentcard.Paths()...) {
		known["GET "+p] = true
	}
	balances := strings.TrimSuffix(escrowBalancePath, "{address}")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		route := r.Method + " " + r.URL.Path
		switch {
		case known[route]:
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, receipt.ReceiptPath) && strings.HasSuffix(r.URL.Path, receipt.ProofSuffix):
			route = "GET " + receipt.ReceiptPath + "{receipt_id}" + receipt.ProofSuffix
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, receipt.ReceiptPath):
			route = "GET " + receipt.ReceiptPath + "{receipt_id}"
		case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, balances) && !strings.Contains(r.URL.Path[len(balances):], "/"):
			route = "GET " + escrowBalancePath
		default:
			route = "other"
		}
		m.calls.Add(route, 1)
		m.responses.Add(strconv.Itoa(sw.status), 1)
	})
}

// statusWriter records the status of a response.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// countExecutions wraps each session's worker to count its executions:
// in all, by session, and by the job's metadata.call_id when the caller
// set one (a string). An execution is counted when the engine calls the
// worker, whatever it answers.
func (m *metrics) countExecutions(ss []router.Session) []router.Session {
	out := make([]router.Session, len(ss))
	for i, s := range ss {
		w, id := s.Worker, strconv.FormatInt(int64(s.ID), 10)
		s.Worker = router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
			m.executions.Add(1)
			m.bySession.Add(id, 1)
			if cid, ok := job.Metadata["call_id"].(string); ok && cid != "" {
				m.callIDs.add(cid)
			}
			return w.Work(ctx, job)
		})
		out[i] = s
	}
	return out
}

// countSettlements wraps f to count the payments it settles.
func (m *metrics) countSettlements(f x402.Facilitator) x402.Facilitator {
	return settleCounter{Facilitator: f, n: &m.settlements}
}

type settleCounter struct {
	x402.Facilitator
	n *expvar.Int
}

func (f settleCounter) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	sr, err := f.Facilitator.Settle(ctx, p, r)
	if err == nil && sr != nil && sr.Success {
		f.n.Add(1)
	}
	return sr, err
}

// callCounts counts executions by call id, for the latest limit ids: when
// a new id would exceed the bound, the id seen first is forgotten. The
// text of the ids kept is bounded too, to callIDBytes an id of the limit:
// a long id forgets as many of the oldest as it takes, and an id longer
// than all of it is not counted (worker_executions still counts its
// executions). A caller names the ids, each as long as a request body
// allows.
type callCounts struct {
	limit     int
	mu        sync.Mutex
	n         map[string]int64
	order     []string // a ring of limit ids, the kept ones from oldest
	oldest    int      // index of the oldest id kept in order
	kept      int      // ids in order
	bytes     int      // the text of the ids kept
	forgotten int64
}

// callIDBytes is the text of the ids a callCounts keeps, on average an id
// of its limit.
const callIDBytes = 64

func (c *callCounts) add(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		c.n = make(map[string]int64)
		c.order = make([]string, c.limit)
	}
	if _, ok := c.n[id]; ok {
		c.n[id]++
		return
	}
	budget := c.limit * callIDBytes
	if len(id) > budget {
		return
	}
	for c.kept == c.limit || c.bytes+len(id) > budget {
		old := c.order[c.oldest]
		delete(c.n, old)
		c.order[c.oldest] = ""
		c.oldest = (c.oldest + 1) % c.limit
		c.kept--
		c.bytes -= len(old)
		c.forgotten++
	}
	c.order[(c.oldest+c.kept)%c.limit] = id
	c.kept++
	c.bytes += len(id)
	c.n[id] = 1
}

// snapshot returns a copy of the counts.
func (c *callCounts) snapshot() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.n == nil {
		return map[string]int64{}
	}
	return maps.Clone(c.n)
}

func (c *callCounts) forgottenCount() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.forgotten
}
