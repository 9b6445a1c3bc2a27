package sim

import (
	"context"
	"errors"
	"fmt"
	"io"
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

// How long a client may take over its side of a request. A real server
// bounds both, or a client that drips its headers or its body holds a
// socket and a goroutine for good: a few hundred of them once starved
// every new request of `ptuprobe serve` under a 512-file limit.
const (
	// HeaderReadTimeout bounds reading a request's line and headers.
	HeaderReadTimeout = 10 * time.Second
	// BodyReadTimeout bounds reading a whole request, its body included
	// (at most 4 MiB: 30 s is slower than 1 Mbit/s). It is http.Server's
	// ReadTimeout, which net/http lifts once the body has been read, so an
	// answer may take as long as it takes; nothing bounds the writing of
	// one (a WriteTimeout would cut a streamed answer, tens of seconds
	// long at TimeScale 1).
	BodyReadTimeout = 30 * time.Second
	// IdleTimeout closes a kept-alive connection no request has used for
	// that long: longer than Go's client keeps one (90 s), so the client
	// closes first and never sends into a connection being closed.
	IdleTimeout = 2 * time.Minute
	// DefaultMaxConnsPerClient is the limit of `ptuprobe serve` on the
	// connections open at once from one client address (MaxConnsPerClient):
	// four times the default --max-in-flight of a traffic command.
	DefaultMaxConnsPerClient = 1024
)

// Option is a setting of Start or Serve beyond the model's Config.
type Option func(*options)

type options struct {
	maxConnsPerClient int
	bodyReadTimeout   time.Duration
}

// MaxConnsPerClient limits the connections open at once from one client
// IP address to n (0: no limit, the default): one more is answered 503
// and closed as soon as it is accepted, so one client cannot hold every
// socket the process may open. The embedded simulator of a traffic
// command sets none: its one client is the command itself, bounded by its
// --max-in-flight.
func MaxConnsPerClient(n int) Option { return func(o *options) { o.maxConnsPerClient = n } }

// Start builds a simulator from cfg, listens on addr (e.g.
// "127.0.0.1:0") and serves until ctx is done or Close is called.
func Start(ctx context.Context, cfg Config, addr string, opts ...Option) (*Running, error) {
	if _, err := New(cfg); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("simulator: listen on %s: %w", addr, err)
	}
	return Serve(ctx, cfg, ln, opts...)
}

// Serve builds a simulator from cfg and serves it on ln until ctx is done
// or Close is called; Close closes ln. URL names ln's address (a test's
// in-memory listener has none a client can dial by name: dial ln itself).
func Serve(ctx context.Context, cfg Config, ln net.Listener, opts ...Option) (*Running, error) {
	s, err := New(cfg)
	if err != nil {
		ln.Close()
		return nil, err
	}
	o := options{bodyReadTimeout: BodyReadTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	run := &Running{
		URL:        "http://" + ln.Addr().String(),
		Deployment: cfg.Deployment,
		Addr:       ln.Addr().String(),
		Server:     s,
		srv: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: HeaderReadTimeout,
			ReadTimeout:       o.bodyReadTimeout,
			IdleTimeout:       IdleTimeout,
			MaxHeaderBytes:    64 << 10,
			ErrorLog:          discardLogger(),
		},
		done: make(chan struct{}),
	}
	if o.maxConnsPerClient > 0 {
		ln = &perClientListener{Listener: ln, max: o.maxConnsPerClient, open: map[string]int{}}
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

// tooManyConns is the whole answer to a connection past MaxConnsPerClient.
const tooManyConns = "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: 43\r\n\r\ntoo many connections open from this address"

// perClientListener counts the open connections per client IP address and
// turns away one past max.
type perClientListener struct {
	net.Listener
	max  int
	mu   sync.Mutex
	open map[string]int
}

func (l *perClientListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		client := clientAddress(c.RemoteAddr())
		l.mu.Lock()
		full := l.open[client] >= l.max
		if !full {
			l.open[client]++
		}
		l.mu.Unlock()
		if !full {
			return &clientConn{Conn: c, release: func() { l.release(client) }}, nil
		}
		select {
		case refusing <- struct{}{}:
			go refuse(c)
		default: // a flood: no answer, no goroutine
			c.Close()
		}
	}
}

// refusing bounds the refusals being answered at once.
var refusing = make(chan struct{}, 64)

// refuse answers 503 and closes c. The answer waits for the request's
// first bytes (an HTTP client takes an answer before its request as a
// broken connection; a client that sends nothing in time gets none), and
// what else the client sends is read and dropped for a moment after it,
// as net/http does when it refuses a connection: closing on unread bytes
// resets the connection, and a reset can destroy the answer before the
// client reads it.
func refuse(c net.Conn) {
	defer func() { <-refusing }()
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Read(make([]byte, 4<<10)); err != nil {
		return
	}
	if _, err := io.WriteString(c, tooManyConns); err != nil {
		return
	}
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(c, 64<<10))
}

func (l *perClientListener) release(client string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[client]--; l.open[client] <= 0 {
		delete(l.open, client)
	}
}

// clientAddress is the IP address of a remote address, without its port.
func clientAddress(a net.Addr) string {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}

// clientConn releases its place in perClientListener's count once closed.
type clientConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *clientConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
