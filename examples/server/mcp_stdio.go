package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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
	w := stdioOut{w: out, calls: calls, mu: new(sync.Mutex)}
	t := &mcp.IOTransport{
		Reader: &stdioIn{r: in, calls: calls, out: w, drain: stdioDrain, log: log, closed: make(chan struct{})},
		Writer: w,
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

// stdioIn passes the host's input on, one line (one message, or a batch)
// at a time, noting the calls in it. A line the SDK cannot read as
// JSON-RPC, which would end its session and cancel every call running
// unanswered, is answered with the JSON-RPC error the specification
// gives it (with a null id) and not passed on. At the end of the input it
// waits for the calls' answers before reporting io.EOF: the SDK cancels
// the calls still running when its input ends, and writes no answer
// after it.
type stdioIn struct {
	r         io.ReadCloser
	calls     *stdioCalls
	out       stdioOut      // where a line refused is answered
	drain     time.Duration // the longest wait for the answers at the end
	log       *slog.Logger
	line      []byte // the input since the last newline
	long      bool   // the current line is longer than the SDK reads
	pending   []byte // the lines checked, not yet read by the SDK
	eof       bool
	err       error         // the input's error, reported once pending is read
	closed    chan struct{} // closed by Close, which ends the wait
	closeOnce sync.Once
}

func (in *stdioIn) Read(p []byte) (int, error) {
	for len(in.pending) == 0 && !in.eof && in.err == nil && len(p) > 0 {
		n, err := in.r.Read(p)
		in.scan(p[:n])
		switch {
		case err == io.EOF:
			in.eof = true
			in.scan([]byte{'\n'}) // a last line without its newline
		case err != nil:
			in.err = err
		}
	}
	if len(in.pending) > 0 || len(p) == 0 {
		n := copy(p, in.pending)
		in.pending = in.pending[n:]
		return n, nil
	}
	if in.err != nil {
		return 0, in.err
	}
	if n := in.calls.wait(in.drain, in.closed); n > 0 {
		in.log.Warn("stdin closed: calls left unanswered", "calls", n, "waited", in.drain)
	}
	return 0, io.EOF
}

// scan checks the lines b completes.
func (in *stdioIn) scan(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			in.keep(b)
			return
		}
		in.keep(b[:i])
		in.check()
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

// check passes the line on to the SDK with its calls noted, or answers
// the JSON-RPC error of a line the SDK cannot read.
func (in *stdioIn) check() {
	code, msg := jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: a line is longer than %d bytes", mcp.DefaultMaxLineLength)
	if !in.long {
		if len(bytes.TrimSpace(in.line)) == 0 {
			return
		}
		if code, msg = lineFault(in.line); code == 0 {
			in.calls.note(in.line)
			in.pending = append(append(in.pending, in.line...), '\n')
			return
		}
	}
	in.log.Warn("stdin: a line that is no JSON-RPC message is answered with an error", "code", code, "error", msg)
	answer, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", json.RawMessage("null"), jsonrpc.Error{Code: int64(code), Message: msg}})
	in.out.Write(append(answer, '\n'))
}

// lineFault returns the JSON-RPC error code of a line that is no
// JSON-RPC message the SDK reads, and a message saying why; 0 for a line
// it reads: one request, notification or response, or a batch of them
// with no request's id twice (nor two notifications).
func lineFault(line []byte) (int, string) {
	if err := json.Unmarshal(line, new(json.RawMessage)); err != nil {
		return jsonrpc.CodeParseError, "Parse error: the line is not one JSON value: " + err.Error()
	}
	line = bytes.TrimSpace(line)
	if line[0] != '[' {
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			return jsonrpc.CodeInvalidRequest, "Invalid Request: " + err.Error()
		}
		return 0, ""
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) == 0 {
		return jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch"
	}
	ids := make(map[jsonrpc.ID]bool, len(batch))
	for i, raw := range batch {
		msg, err := jsonrpc.DecodeMessage(raw)
		if err != nil {
			return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: batch[%d]: %v", i, err)
		}
		// The SDK ends its session on a batch holding two requests of
		// one id, notifications (which have none) included.
		if req, ok := msg.(*jsonrpc.Request); ok {
			if ids[req.ID] {
				return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: batch[%d]: its id is another request's of the batch (notifications count as one id, none)", i)
			}
			ids[req.ID] = true
		}
	}
	return 0, ""
}

// Close closes the input and ends a wait for answers.
func (in *stdioIn) Close() error {
	in.closeOnce.Do(func() { close(in.closed) })
	return in.r.Close()
}

// stdioOut writes the server's messages, and the errors answered to the
// lines stdioIn refuses, one at a time, noting the answers among them. It
// does not close w.
type stdioOut struct {
	w     io.Writer
	calls *stdioCalls
	mu    *sync.Mutex // serializes the SDK's writes and stdioIn's
}

func (out stdioOut) Write(p []byte) (int, error) {
	out.mu.Lock()
	defer out.mu.Unlock()
	n, err := out.w.Write(p)
	out.calls.answer(p)
	return n, err
}

func (stdioOut) Close() error { return nil }
