// Package memnet is an in-memory network: a net.Listener whose
// connections are net.Pipe pairs, and the dialer that reaches it. Under
// testing/synctest a goroutine blocked on a real socket keeps the bubble's
// fake clock from moving; on a pipe it does not, so an HTTP client and
// server (the embedded simulator, say) can run a long scenario in
// milliseconds of real time with every timing exact.
//
// It is a production package, not a test helper: internal/campaign serves
// the embedded simulator on it when Target.InMemory is set, so that a
// whole traffic run (plans, client, retry owner, simulator, results file)
// runs in a synctest bubble, as the tests of analyze and policylab run
// it. It imports nothing of ptuprobe's and never touches a socket.
package memnet

import (
	"context"
	"errors"
	"net"
	"sync"
)

// Listener accepts the connections its DialContext makes.
type Listener struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

// Listen returns a new, open Listener.
func Listen() *Listener {
	return &Listener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for the next dialed connection.
func (l *Listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops accepting; dials fail from then on.
func (l *Listener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

// Addr is a placeholder address: there is no socket.
func (l *Listener) Addr() net.Addr { return addr{} }

// DialContext connects to the listener, whatever network and address are
// asked for: it fits http.Transport.DialContext.
func (l *Listener) DialContext(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		client.Close()
		server.Close()
		return nil, errors.New("memnet: dial a closed listener")
	case <-ctx.Done():
		client.Close()
		server.Close()
		return nil, ctx.Err()
	}
}

type addr struct{}

func (addr) Network() string { return "memnet" }
func (addr) String() string  { return "memnet" }
