package trustmcp_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// panicking is a trust.Caller whose every call panics.
type panicking struct{}

func (panicking) Call(context.Context, *trust.Request) (*trust.Response, error) {
	panic("caller broke at 10.0.0.7")
}

// A tool that panics answers a JSON-RPC internal error, as the HTTP doors
// answer 500, rather than end the process: the SDK runs each call in a
// goroutine of its own. The panic's value goes to the log, never to the
// client.
func TestServer_toolPanicIsInternalError(t *testing.T) {
	f := newFixture(t)
	cfg := f.cfg
	cfg.Caller = panicking{}
	var log logBuffer
	cfg.Logger = slog.New(slog.NewTextHandler(&log, nil))
	s, err := trustmcp.NewServer(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	raw := rawToolCall(t, statelessHTTP(t, s).URL, trustmcp.ToolValidateClaim, `{"claimed_result":"17 * 3 = 51"}`, &out)
	if out.Error.Code != -32603 || strings.Contains(string(raw), "10.0.0.7") {
		t.Errorf("answer %s, want a JSON-RPC internal error (-32603) that does not show the panic", raw)
	}
	if !strings.Contains(log.String(), "caller broke at 10.0.0.7") {
		t.Errorf("the log lacks the panic:\n%s", log.String())
	}
}
