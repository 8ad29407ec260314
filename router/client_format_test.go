package router_test

import (
	"testing"

	"github.com/vouchkit/vouch/internal/secrettest"
	"github.com/vouchkit/vouch/router"
)

// TestClient_formatHidesKey checks that neither fmt nor log/slog shows a
// Client's API key or the password of its base URL.
func TestClient_formatHidesKey(t *testing.T) {
	c, err := router.NewClient("https://user:hunter2@vouch.example", router.WithAPIKey("sk-router-secret"))
	if err != nil {
		t.Fatal(err)
	}
	secrettest.Hidden(t, c, "sk-router-secret", "hunter2")
}

func TestClient_String(t *testing.T) {
	c, err := router.NewClient("https://user:hunter2@vouch.example", router.WithAPIKey("sk-router-secret"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.String(), "router.Client(https://user:xxxxx@vouch.example, normal)"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
