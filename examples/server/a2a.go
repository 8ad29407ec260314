package main

import (
	"net/http"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/trust/agentcard"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// The paths of the A2A JSON-RPC endpoint: /a2a, the agent card's url,
// and the public router's /api/v1/a2a.
const (
	a2aPath    = agentcard.DefaultA2APath
	a2aAPIPath = "/api/v1/a2a"
)

// mountA2A serves the trust skills over A2A 0.3 (message/send, tasks/get)
// and 1.0 (SendMessage, GetTask, ListTasks) at /a2a and /api/v1/a2a,
// behind the API keys, and the agent card that announces both at
// /.well-known/agent-card.json and the older paths, at publicURL (empty:
// the scheme and Host of each request). It returns the A2A handler, to
// close once the server has stopped.
func mountA2A(mux *http.ServeMux, d agentDeps, publicURL string) (*trusta2a.Handler, error) {
	a2a, err := trusta2a.NewHandler(trusta2a.Config{Caller: d.svc, Router: d.engine, Authenticator: d.auth, Logger: d.log})
	if err != nil {
		return nil, err
	}
	// Traced and counted as the API's routes are; the trust call's span is
	// the child of the request's.
	h := httpapi.Instrument(a2a, d.obs.tracerProvider(), d.obs.meterProvider(), "normal")
	mux.Handle(a2aPath, h)
	mux.Handle(a2aAPIPath, h)
	card := agentcard.Handler(agentcard.Config{Name: "vouch demo server", BaseURL: publicURL, MCPPath: mcpPath, A2APath: a2aPath})
	for _, p := range agentcard.Paths() {
		mux.Handle(p, card)
	}
	return a2a, nil
}
