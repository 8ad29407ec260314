package httpapi_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestServer_credentialNamedAsAnonymousCaller: a credential the
// Authenticator names as the server names a caller without one
// ("ip:<address>", "payer:<address>", or "local", the host's own
// in-process calls) would share that caller's calls,
// receipts and kept answers. On a Key route it is refused 500 and the
// mistake logged; on a trial route the request is served as the
// anonymous caller it comes from, naming no principal.
func TestServer_credentialNamedAsAnonymousCaller(t *testing.T) {
	var log bytes.Buffer
	srv := newServer(t, httpapi.Config{
		Authenticator: httpapi.KeyAuthenticator(map[string]string{"k-ip": "ip:127.0.0.1", "k-payer": "payer:0xabc", "k-local": "local", "k-ok": "alice"}),
		Logger:        slog.New(slog.NewTextHandler(&log, nil)),
		Endpoints: []httpapi.Endpoint{
			{Method: "POST", Path: "/key", Access: httpapi.Key, Prepare: echo},
			{Method: "POST", Path: "/trial", Access: httpapi.Trial, Prepare: echo},
		},
	})
	type answer struct {
		Status            int
		Code              string
		Caller, Principal string
	}
	call := func(path, key string) answer {
		t.Helper()
		got := send(t, "POST", srv.URL+path, `{}`, "Authorization", "Bearer "+key)
		var body struct{ Code, Caller, Principal string }
		if err := json.Unmarshal([]byte(got.body), &body); err != nil {
			t.Fatalf("%s with %s: %d %s", path, key, got.status, got.body)
		}
		return answer{got.status, body.Code, body.Caller, body.Principal}
	}
	tests := []struct {
		path, key string
		want      answer
	}{
		{"/key", "k-ip", answer{Status: http.StatusInternalServerError, Code: "internal"}},
		{"/key", "k-payer", answer{Status: http.StatusInternalServerError, Code: "internal"}},
		{"/key", "k-local", answer{Status: http.StatusInternalServerError, Code: "internal"}},
		{"/key", "k-ok", answer{Status: http.StatusOK, Caller: "key:alice", Principal: "alice"}},
		{"/trial", "k-ip", answer{Status: http.StatusOK, Caller: "ip:127.0.0.1"}},
		{"/trial", "k-ok", answer{Status: http.StatusOK, Caller: "key:alice", Principal: "alice"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, call(tc.path, tc.key)); diff != "" {
			t.Errorf("%s with %s (-want +got):\n%s", tc.path, tc.key, diff)
		}
	}
	if n := strings.Count(log.String(), `payer:0xabc\" is spelt as`); n != 1 {
		t.Errorf("the log names the payer-named credential %d times, want once:\n%s", n, log.String())
	}
}

func TestCheckCredentialName(t *testing.T) {
	for name, refused := range map[string]bool{
		"alice": false, "key:alice": false, "IP:1.2.3.4": false, "payer": false,
		"ip:192.0.2.1": true, "ip:": true, "payer:0xabc": true,
		"local": true, "Local": false, "trial:alice": true, "trial:": true, "trial": false,
	} {
		if err := httpapi.CheckCredentialName(name); (err != nil) != refused {
			t.Errorf("CheckCredentialName(%q) = %v; refused %v", name, err, refused)
		}
	}
}
