package router_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// TestClient_formatHidesKey checks that neither fmt nor log/slog shows a
// Client's API key or the password of its base URL.
func TestClient_formatHidesKey(t *testing.T) {
	c, err := router.NewClient("https://user:hunter2@vouch.example", router.WithAPIKey("sk-router-secret"))
	if err != nil {
		t.Fatal(err)
	}
	var text, js bytes.Buffer
	slog.New(slog.NewTextHandler(&text, nil)).Info("client", "c", c)
	slog.New(slog.NewJSONHandler(&js, nil)).Info("client", "c", c)
	for how, s := range map[string]string{
		"fmt":  fmt.Sprintf("%v|%+v|%#v|%s|%x", c, c, c, c, c),
		"text": text.String(), "json": js.String(),
	} {
		for _, secret := range []string{"sk-router-secret", "hunter2"} {
			if strings.Contains(s, secret) {
				t.Errorf("%s shows %q: %s", how, secret, s)
			}
		}
	}
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
