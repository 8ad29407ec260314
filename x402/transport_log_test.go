package x402_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// TestTransport_paidLogHidesQueryAndUser: the "paid" log line names the
// URL paid without its query and user info, either of which may hold a
// key.
func TestTransport_paidLogHidesQueryAndUser(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	var buf bytes.Buffer
	c := &http.Client{Transport: &x402.Transport{Payer: newPayer(t), Budget: x402.NewBudget(5000), Logger: slog.New(slog.NewJSONHandler(&buf, nil))}}
	u := strings.Replace(ps.URL, "http://", "http://alice:s3cret@", 1) + "/paid?api-key=s3cret"
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, u, strings.NewReader("hello"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status = %d, want 200", resp.StatusCode)
	}
	logged := buf.String()
	if want := `"url":"` + ps.URL + `/paid"`; !strings.Contains(logged, `"msg":"x402: paid"`) || !strings.Contains(logged, want) {
		t.Errorf("log = %s, want the paid line with %s", logged, want)
	}
	if strings.Contains(logged, "s3cret") || strings.Contains(logged, "alice") {
		t.Errorf("log = %s, shows the URL's query or user info", logged)
	}
}
