package trusta2a_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// A credential the Authenticator names as a caller without one is named
// ("ip:<address>", "payer:<address>") would share that caller's tasks,
// receipts and reports: the door answers 500 and runs nothing; a
// credential of another name is served.
func TestHandler_credentialNamedAsAnonymousCaller(t *testing.T) {
	engine, err := router.NewEngine([]router.Session{{ID: 1, Worker: routertest.Arithmetic()}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		t.Fatal(err)
	}
	h, err := trusta2a.NewHandler(trusta2a.Config{Caller: svc,
		Authenticator: router.KeyAuthenticator(map[string]string{"k-ip": "ip:127.0.0.1", "k-payer": "payer:0xabc", "k-ok": "alice"})})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"ListTasks","params":{}}`
	for key, want := range map[string]int{"k-ip": http.StatusInternalServerError, "k-payer": http.StatusInternalServerError, "k-ok": http.StatusOK} {
		req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ Code string }
		err = json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if resp.StatusCode != want || err != nil || want != http.StatusOK && got.Code != "internal" {
			t.Errorf("key %s: %d %+v (%v), want %d", key, resp.StatusCode, got, err, want)
		}
	}
}
