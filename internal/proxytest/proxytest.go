// Package proxytest forwards TCP connections to a server in tests, and
// stops on demand: to a client connected through it, stopping it is the
// server going away, as when a database stops or its network fails.
package proxytest

import (
	"io"
	"net"
	"sync"
	"testing"
)

// A Proxy forwards each TCP connection it accepts to its target, until
// it is stopped.
type Proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	wg     sync.WaitGroup
}

// Start starts a Proxy on a loopback port that forwards to target (a
// host:port), stopped when t ends. Start fails t when it cannot listen.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxytest: %v", err)
	}
	p := &Proxy{ln: ln, target: target}
	p.wg.Go(p.accept)
	t.Cleanup(p.Stop)
	return p
}

// Addr returns the host:port the proxy listens on.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		d, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, d)
		p.mu.Unlock()
		p.wg.Go(func() { _, _ = io.Copy(d, c); d.Close() })
		p.wg.Go(func() { _, _ = io.Copy(c, d); c.Close() })
	}
}

// Stop closes the listener and every connection, and waits for the
// copies to end. Stopping a stopped Proxy does nothing more.
func (p *Proxy) Stop() {
	p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
