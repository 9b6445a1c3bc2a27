package hostile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Mode is how the server answers every request.
type Mode string

// The modes; doc.go says what each one sends.
const (
	HugeHeader    Mode = "huge-header"
	EchoKey       Mode = "echo-key"
	NonUTF8       Mode = "non-utf8"
	DupRetryAfter Mode = "dup-retry-after"
	Garbage       Mode = "garbage"
	Reset         Mode = "reset"
	SlowBody      Mode = "slow-body"
	EndlessBody   Mode = "endless-body"
)

// Modes lists every mode, for tests that run them all.
var Modes = []Mode{HugeHeader, EchoKey, NonUTF8, DupRetryAfter, Garbage, Reset, SlowBody, EndlessBody}

// Defaults of Config.
const (
	DefaultStatus      = http.StatusTooManyRequests
	DefaultHeaderBytes = 9_500_000
	DefaultBodyBytes   = 1024
	DefaultTrickle     = 100 * time.Millisecond
	DefaultLifetime    = time.Minute
)

// MaxRequestBytes bounds what the server reads of one request, headers and
// body: ptuprobe's largest prompt body is about 4 MB.
const MaxRequestBytes = 16 << 20

// Config says how a Server answers. Zero values mean the defaults.
type Config struct {
	Mode        Mode
	Status      int           // the status of every answer that has one
	HeaderBytes int           // huge-header: the size of X-Huge's value
	BodyBytes   int           // slow-body: the announced Content-Length
	Trickle     time.Duration // slow-body: the pause before each body byte
	// EchoHeaders are the request headers echo-key looks for, in order;
	// the first one present is echoed.
	EchoHeaders []string
	// Lifetime bounds how long one connection is served.
	Lifetime time.Duration
}

func (c *Config) fill() error {
	switch c.Mode {
	case HugeHeader, EchoKey, NonUTF8, DupRetryAfter, Garbage, Reset, SlowBody, EndlessBody:
	default:
		return fmt.Errorf("hostile: unknown mode %q", c.Mode)
	}
	if c.Status == 0 {
		c.Status = DefaultStatus
	}
	if c.Status < 100 || c.Status > 999 {
		return fmt.Errorf("hostile: status %d is not three digits", c.Status)
	}
	if c.HeaderBytes <= 0 {
		c.HeaderBytes = DefaultHeaderBytes
	}
	if c.BodyBytes <= 0 {
		c.BodyBytes = DefaultBodyBytes
	}
	if c.Trickle <= 0 {
		c.Trickle = DefaultTrickle
	}
	if c.EchoHeaders == nil {
		c.EchoHeaders = []string{"api-key", "Authorization"}
	}
	if c.Lifetime <= 0 {
		c.Lifetime = DefaultLifetime
	}
	return nil
}

// Server is a running hostile server.
type Server struct {
	cfg      Config
	ln       net.Listener
	done     chan struct{}
	wg       sync.WaitGroup
	requests atomic.Int64

	mu     sync.Mutex
	closed bool
	conns  map[net.Conn]struct{}
}

// Start serves cfg on a new loopback listener, 127.0.0.1 on a free port.
func Start(cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	return serve(ln, cfg), nil
}

// Serve serves cfg on ln, which the Server owns from then on: Close closes
// it.
func Serve(ln net.Listener, cfg Config) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	return serve(ln, cfg), nil
}

func serve(ln net.Listener, cfg Config) *Server {
	s := &Server{cfg: cfg, ln: ln, done: make(chan struct{}), conns: map[net.Conn]struct{}{}}
	s.wg.Add(1)
	go s.accept()
	return s
}

// URL is the server's base URL, http://ADDRESS.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Requests returns how many requests the server has read in full.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// Close stops the server: no more connections are accepted, open ones
// are closed, and Close returns once every goroutine of the server ended.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	close(s.done)
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) || s.isClosed() {
				return
			}
			// A transient failure (out of file descriptors, say): wait a
			// little, as net/http's server does, unless closed meanwhile.
			select {
			case <-s.done:
				return
			case <-time.After(5 * time.Millisecond):
			}
			continue
		}
		if !s.track(c) {
			c.Close()
			return
		}
		go s.serveConn(c)
	}
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// track registers c for Close, and one goroutine more for Close to wait
// for; false when the server is already closed.
func (s *Server) track(c net.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.conns[c] = struct{}{}
	s.wg.Add(1)
	return true
}

func (s *Server) serveConn(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	_ = c.SetDeadline(time.Now().Add(s.cfg.Lifetime))
	lr := &io.LimitedReader{R: c}
	br := bufio.NewReader(lr)
	for {
		lr.N = MaxRequestBytes
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			return
		}
		s.requests.Add(1)
		if !s.answer(c, req) {
			return
		}
	}
}

// answer writes the mode's answer to req; true when the connection can
// serve another request.
func (s *Server) answer(c net.Conn, req *http.Request) bool {
	status := "HTTP/1.1 " + strconv.Itoa(s.cfg.Status) + " Hostile\r\n"
	switch s.cfg.Mode {
	case HugeHeader:
		return write(c, status+"Retry-After-Ms: 10\r\nX-Huge: ") &&
			writeFill(c, s.cfg.HeaderBytes, nil) &&
			write(c, "\r\nContent-Length: 0\r\n\r\n")
	case EchoKey:
		v := s.echoed(req)
		return write(c, status+"Retry-After-Ms: "+v+"\r\nRetry-After: "+middle(v)+"\r\nX-Echo: "+v+"\r\nContent-Length: 0\r\n\r\n")
	case NonUTF8:
		ra := "\xff\xfe7"
		for range 40 {
			ra += "é"
		}
		return write(c, status+"Retry-After: "+ra+"\r\nRetry-After-Ms: 25\xe2\x82\r\nContent-Length: 0\r\n\r\n")
	case DupRetryAfter:
		return write(c, status+"Retry-After-Ms: 10\r\nRetry-After-Ms: 20000\r\nRetry-After: 1\r\nRetry-After: 30\r\nContent-Length: 0\r\n\r\n")
	case Garbage:
		write(c, "SSH-2.0-hostile_1.0\r\n\x00\x01\x02\xff\xfe\r\n\r\n")
		return false
	case Reset:
		write(c, status+"Retry-After-Ms: 1")
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		return false
	case SlowBody:
		if !write(c, status+"Content-Type: text/plain\r\nContent-Length: "+strconv.Itoa(s.cfg.BodyBytes)+"\r\n\r\n") {
			return false
		}
		for range s.cfg.BodyBytes {
			if !s.pause(s.cfg.Trickle) || !write(c, "x") {
				return false
			}
		}
		return true
	case EndlessBody:
		if write(c, status+"Content-Type: text/plain\r\nConnection: close\r\n\r\n") {
			writeFill(c, -1, s.done)
		}
		return false
	}
	return false
}

// echoed is the value of the first of the configured headers present.
func (s *Server) echoed(req *http.Request) string {
	for _, name := range s.cfg.EchoHeaders {
		if v := req.Header.Get(name); v != "" {
			return v
		}
	}
	return ""
}

// middle is the middle half of v, at least 12 bytes of it when v has them:
// a partial echo.
func middle(v string) string {
	n := max(len(v)/2, min(12, len(v)))
	i := (len(v) - n) / 2
	return v[i : i+n]
}

// pause waits d, or until the server closes; false in that case.
func (s *Server) pause(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

func write(c net.Conn, s string) bool {
	_, err := io.WriteString(c, s)
	return err == nil
}

// block is the shared filler of huge headers and endless bodies.
var block = func() []byte {
	b := make([]byte, 32<<10)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}()

// writeFill writes n bytes of filler (n < 0: until a write fails or done
// closes) from the shared block.
func writeFill(c net.Conn, n int, done <-chan struct{}) bool {
	for n != 0 {
		if done != nil {
			select {
			case <-done:
				return false
			default:
			}
		}
		b := block
		if n > 0 && n < len(b) {
			b = b[:n]
		}
		if _, err := c.Write(b); err != nil {
			return false
		}
		if n > 0 {
			n -= len(b)
		}
	}
	return true
}
