package sim

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// Running is a simulator listening on a socket.
type Running struct {
	// URL is the base URL, e.g. http://127.0.0.1:8089.
	URL string
	// Deployment is the PTU deployment's name.
	Deployment string
	// Addr is the address actually bound (port resolved).
	Addr string
	// Server is the handler, for Stats.
	Server *Server

	srv       *http.Server
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// Start builds a simulator from cfg, listens on addr (e.g.
// "127.0.0.1:0") and serves until ctx is done or Close is called.
func Start(ctx context.Context, cfg Config, addr string) (*Running, error) {
	if _, err := New(cfg); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("simulator: listen on %s: %w", addr, err)
	}
	return Serve(ctx, cfg, ln)
}

// Serve builds a simulator from cfg and serves it on ln until ctx is done
// or Close is called; Close closes ln. URL names ln's address (a test's
// in-memory listener has none a client can dial by name: dial ln itself).
func Serve(ctx context.Context, cfg Config, ln net.Listener) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	run := &Running{
		URL:        "http://" + ln.Addr().String(),
		Deployment: cfg.Deployment,
		Addr:       ln.Addr().String(),
		Server:     s,
		srv: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          discardLogger(),
		},
		done: make(chan struct{}),
	}
	go func() {
		defer close(run.done)
		if err := run.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			run.closeErr = err
		}
	}()
	go func() {
		select {
		case <-ctx.Done():
			run.Close()
		case <-run.done:
		}
	}()
	return run, nil
}

// Close stops the simulator at once: open connections are closed and
// in-flight requests canceled. It is safe to call more than once.
func (r *Running) Close() error {
	r.closeOnce.Do(func() {
		err := r.srv.Close()
		<-r.done
		if r.closeErr == nil {
			r.closeErr = err
		}
	})
	return r.closeErr
}

// Done is closed when the server has stopped.
func (r *Running) Done() <-chan struct{} { return r.done }
