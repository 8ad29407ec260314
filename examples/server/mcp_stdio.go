package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// stdioDrain is how long the calls still running when the host closes
// stdin may take to be answered: the longest a call runs (the engine's
// call timeout) plus the shutdown grace.
const stdioDrain = router.DefaultCallTimeout + shutdownGrace

// serveStdio serves the MCP tools on in and out (stdin and stdout) until
// ctx ends or the host closes in. Nothing else is written to out; the log
// goes to stderr. The caller of every call is trust.DefaultCaller.
//
// When in ends, the calls read and still running are answered before
// serveStdio returns (within stdioDrain), so that a host that writes its
// calls and closes stdin, as a shell pipe does, gets every answer.
func serveStdio(ctx context.Context, s *server, log *slog.Logger, in io.ReadCloser, out io.Writer) error {
	tools := strings.Join([]string{trustmcp.ToolValidateClaim, trustmcp.ToolDelegateTask, trustmcp.ToolArbitrate, trustmcp.ToolFactcheck,
		trustmcp.ToolGetReceipt, trustmcp.ToolVerifyReceipt, trustmcp.ToolReportOutcome}, ", ")
	log.Info("serving MCP on stdio", "tools", tools, "sessions", s.sessions)
	calls := &stdioCalls{open: make(map[jsonrpc.ID]int), answered: make(chan struct{})}
	t := &mcp.IOTransport{
		Reader: &stdioIn{r: in, calls: calls, drain: stdioDrain, log: log, closed: make(chan struct{})},
		Writer: stdioOut{w: out, calls: calls},
	}
	err := s.mcp.Run(ctx, t)
	if err != nil && ctx.Err() != nil {
		return nil
	}
	return err
}

// stdioCalls follows the calls a host sent over stdio until their answers
// are written.
type stdioCalls struct {
	mu       sync.Mutex
	open     map[jsonrpc.ID]int // the calls read and not yet answered, by ID
	answered chan struct{}      // closed and replaced when a call is answered
}

// note notes the calls among the messages of line, one message or a
// batch. A line that is not JSON-RPC is the SDK's to refuse.
func (c *stdioCalls) note(line []byte) {
	line = bytes.TrimSpace(line)
	msgs := []json.RawMessage{line}
	if len(line) > 0 && line[0] == '[' && json.Unmarshal(line, &msgs) != nil {
		return
	}
	for _, raw := range msgs {
		msg, err := jsonrpc.DecodeMessage(raw)
		if req, ok := msg.(*jsonrpc.Request); err == nil && ok && req.IsCall() {
			c.mu.Lock()
			c.open[req.ID]++
			c.mu.Unlock()
		}
	}
}

// answer notes the answers among the messages of p, one message or a
// batch as the SDK writes them.
func (c *stdioCalls) answer(p []byte) {
	p = bytes.TrimSpace(p)
	msgs := []json.RawMessage{p}
	if len(p) > 0 && p[0] == '[' && json.Unmarshal(p, &msgs) != nil {
		return
	}
	for _, raw := range msgs {
		msg, err := jsonrpc.DecodeMessage(raw)
		resp, ok := msg.(*jsonrpc.Response)
		if err != nil || !ok {
			continue
		}
		c.mu.Lock()
		if c.open[resp.ID] > 1 {
			c.open[resp.ID]--
		} else {
			delete(c.open, resp.ID)
		}
		close(c.answered)
		c.answered = make(chan struct{})
		c.mu.Unlock()
	}
}

// wait waits until every call read is answered, d passes or done is
// closed, and returns how many calls are left unanswered.
func (c *stdioCalls) wait(d time.Duration, done <-chan struct{}) int {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		c.mu.Lock()
		n, answered := len(c.open), c.answered
		c.mu.Unlock()
		if n == 0 {
			return 0
		}
		select {
		case <-answered:
		case <-timer.C:
			return n
		case <-done:
			return n
		}
	}
}

// stdioIn passes the host's input on, noting the calls in it. At the end
// of the input it waits for their answers before reporting io.EOF: the
// SDK cancels the calls still running when its input ends, and writes no
// answer after it.
type stdioIn struct {
	r         io.ReadCloser
	calls     *stdioCalls
	drain     time.Duration // the longest wait for the answers at the end
	log       *slog.Logger
	line      []byte // the input since the last newline
	long      bool   // the current line is longer than the SDK reads
	eof       bool
	closed    chan struct{} // closed by Close, which ends the wait
	closeOnce sync.Once
}

func (in *stdioIn) Read(p []byte) (int, error) {
	if !in.eof {
		n, err := in.r.Read(p)
		in.scan(p[:n])
		if err != io.EOF {
			return n, err
		}
		in.eof = true
		in.scan([]byte{'\n'}) // a last line without its newline
		if n > 0 {
			return n, nil // the end comes with the next Read, once the SDK has these
		}
	}
	if n := in.calls.wait(in.drain, in.closed); n > 0 {
		in.log.Warn("stdin closed: calls left unanswered", "calls", n, "waited", in.drain)
	}
	return 0, io.EOF
}

// scan notes the calls of the lines b completes.
func (in *stdioIn) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			in.keep(b)
			return
		}
		in.keep(b[:i])
		if !in.long {
			in.calls.note(in.line)
		}
		in.line, in.long = in.line[:0], false
		b = b[i+1:]
	}
}

// keep adds b to the current line, up to the longest line the SDK reads.
func (in *stdioIn) keep(b []byte) {
	if in.long || len(in.line)+len(b) > mcp.DefaultMaxLineLength {
		in.line, in.long = in.line[:0], true
		return
	}
	in.line = append(in.line, b...)
}

// Close closes the input and ends a wait for answers.
func (in *stdioIn) Close() error {
	in.closeOnce.Do(func() { close(in.closed) })
	return in.r.Close()
}

// stdioOut writes the server's messages, noting the answers among them.
// It does not close w.
type stdioOut struct {
	w     io.Writer
	calls *stdioCalls
}

func (out stdioOut) Write(p []byte) (int, error) {
	n, err := out.w.Write(p)
	out.calls.answer(p)
	return n, err
}

func (stdioOut) Close() error { return nil }
