package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// The paths of the health checks.
const (
	healthzPath = "/healthz"
	readyzPath  = "/readyz"
)

// readyTimeout bounds the checks of one /readyz request.
const readyTimeout = 2 * time.Second

// health answers GET /healthz and GET /readyz on the API listener,
// without credentials, for load balancers and orchestrators.
//
// /healthz (liveness) answers 200 while the process serves HTTP.
// /readyz (readiness) answers 200 when the stores are reachable and at
// least one session of the engine may take calls: healthy, or half open
// (its cooldown over, its next run its trial), and 503 otherwise; the
// JSON body names each check's result. A half-open session counts, so
// that a server whose every session failed comes back into a load
// balancer's rotation once the cooldown ends, and the next call tries
// the models again: a server left out until a call succeeded would get
// no call to succeed with.
type health struct {
	sessions router.StatusReporter
	// ping reaches the stores; nil means they live in this process.
	ping func(context.Context) error
	log  *slog.Logger
}

// register adds the two routes to mux.
func (h *health) register(mux *http.ServeMux) {
	handleGet(mux, healthzPath, http.HandlerFunc(h.live))
	handleGet(mux, readyzPath, http.HandlerFunc(h.ready))
}

// handleGet serves h on mux for GET and HEAD requests to path, and
// answers any other method 405 with Allow: GET, HEAD, as the library's
// routes do. Without the second pattern the router's handler, which
// serves every path mux does not, would take the other methods and
// answer 404. Every answer carries a request id of the library's form,
// repeated as a problem's request_id.
func handleGet(mux *http.ServeMux, path string, h http.Handler) {
	const allow = "GET, HEAD"
	mux.Handle(http.MethodGet+" "+path, httpapi.WithRequestID(h))
	mux.Handle(path, httpapi.WithRequestID(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		httpapi.WriteProblem(w, r, problem.Newf(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
			"%s %s is not served; use %s", r.Method, r.URL.Path, allow))
	})))
}

// readiness is the body of /readyz.
type readiness struct {
	Status string `json:"status"` // "ready" or "not_ready"
	Stores string `json:"stores"` // "ok" or "unreachable"
	// Sessions is "<healthy> of <all> healthy", with ", <n> half open"
	// when some are, or "unknown" when the status could not be read.
	Sessions string `json:"sessions"`
}

func (h *health) live(w http.ResponseWriter, _ *http.Request) {
	writeHealth(w, http.StatusOK, map[string]string{"status": "live"})
}

func (h *health) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	rd := readiness{Status: "ready", Stores: "ok", Sessions: "unknown"}
	ok := true
	if h.ping != nil {
		if err := h.ping(ctx); err != nil {
			h.log.WarnContext(ctx, "readyz: stores unreachable", "error", err)
			rd.Stores, ok = "unreachable", false
		}
	}
	st, err := h.sessions.Status(ctx)
	if err != nil {
		h.log.WarnContext(ctx, "readyz: reading the sessions' status", "error", err)
		ok = false
	} else {
		healthy, halfOpen := 0, 0
		for _, s := range st.Sessions {
			switch s.Health {
			case router.HealthHealthy:
				healthy++
			case router.HealthHalfOpen:
				halfOpen++
			}
		}
		rd.Sessions = fmt.Sprintf("%d of %d healthy", healthy, len(st.Sessions))
		if halfOpen > 0 {
			rd.Sessions += fmt.Sprintf(", %d half open", halfOpen)
		}
		ok = ok && healthy+halfOpen > 0
	}
	status := http.StatusOK
	if !ok {
		rd.Status, status = "not_ready", http.StatusServiceUnavailable
	}
	writeHealth(w, status, rd)
}

func writeHealth(w http.ResponseWriter, status int, body any) {
	data, _ := json.Marshal(body) // strings only
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(data, '\n'))
}
