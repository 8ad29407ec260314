package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/chatworker"
)

// sessions returns the engine's sessions, from the panel file of
// -workers or else the demo ones, and one line describing them.
func sessions(cfg config) ([]router.Session, string, error) {
	if cfg.workers == "" {
		return demoSessions(cfg.slowSession), "sessions 1-6 in pools a (1,3,5) and b (2,4,6); session 2 is slow, session 5 wrong one call in three", nil
	}
	return panelSessions(cfg.workers, os.Getenv)
}

// panelSessions loads a chatworker panel file (API keys from the
// environment variables it names, through getenv) and runs each of its
// sessions on its chat-completions worker.
func panelSessions(path string, getenv func(string) string) ([]router.Session, string, error) {
	panel, err := chatworker.LoadPanel(path, getenv)
	if err != nil {
		return nil, "", fmt.Errorf("-workers: %w", err)
	}
	ss := make([]router.Session, len(panel))
	desc := make([]string, len(panel))
	for i, p := range panel {
		ss[i] = router.Session{ID: p.ID, Worker: p.Worker, Tiers: p.Tiers, Pool: p.Pool}
		desc[i] = fmt.Sprintf("%d %s", p.ID, p.Worker)
		if p.Pool != "" {
			desc[i] += " (pool " + p.Pool + ")"
		}
	}
	return ss, "sessions from " + path + ": " + strings.Join(desc, ", "), nil
}

// identifySessions names the worker behind each session to book
// (reputation.Book.Identify): a session whose worker changed since a
// server last started on the same reputation store (a database or a
// file), another model in the panel file, is forgotten, and the log says
// so.
func identifySessions(ctx context.Context, book *reputation.Book, ss []router.Session, log *slog.Logger) error {
	for _, s := range ss {
		identity := workerIdentity(s)
		changed, err := book.Identify(ctx, int64(s.ID), identity)
		if err != nil {
			return fmt.Errorf("session %d: %w", s.ID, err)
		}
		if changed {
			log.Info("a session's worker changed: what was learned of it is forgotten", "session", s.ID, "worker", identity)
		}
	}
	return nil
}

// workerIdentity describes the worker behind s: a panel worker's model
// and endpoint (chatworker.Worker.String), or "demo" for the demo
// sessions, whose workers never change.
func workerIdentity(s router.Session) string {
	if w, ok := s.Worker.(fmt.Stringer); ok {
		return w.String()
	}
	return "demo"
}
