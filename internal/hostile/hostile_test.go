package hostile

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
)

const request = "POST /openai/deployments/d/chat/completions HTTP/1.1\r\nHost: h\r\napi-key: key-0123456789abcdef-key\r\nContent-Length: 2\r\n\r\n{}"

// ask sends one request on a fresh connection to s and returns the
// connection and a reader of its answer.
func ask(t *testing.T, s *Server, dial func() (net.Conn, error)) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := io.WriteString(c, request); err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

func tcpDial(s *Server) func() (net.Conn, error) {
	return func() (net.Conn, error) { return net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://")) }
}

// TestModesOnLoopback reads each mode's answer off a real socket. Nothing
// here waits on a timer: every answer is written at once.
func TestModesOnLoopback(t *testing.T) {
	t.Parallel()
	tests := []struct {
		cfg   Config
		check func(t *testing.T, br *bufio.Reader)
	}{
		{Config{Mode: HugeHeader, HeaderBytes: 200_000}, func(t *testing.T, br *bufio.Reader) {
			resp := readResponse(t, br)
			if resp.StatusCode != 429 || len(resp.Header.Get("X-Huge")) != 200_000 || resp.Header.Get("Retry-After-Ms") != "10" {
				t.Fatalf("status %d, X-Huge of %d bytes", resp.StatusCode, len(resp.Header.Get("X-Huge")))
			}
		}},
		{Config{Mode: EchoKey, Status: 503}, func(t *testing.T, br *bufio.Reader) {
			resp := readResponse(t, br)
			h := resp.Header
			if resp.StatusCode != 503 || h.Get("Retry-After-Ms") != "key-0123456789abcdef-key" || h.Get("X-Echo") != "key-0123456789abcdef-key" ||
				h.Get("Retry-After") != "23456789abcd" {
				t.Fatalf("status %d, headers %q", resp.StatusCode, h)
			}
		}},
		{Config{Mode: NonUTF8}, func(t *testing.T, br *bufio.Reader) {
			h := readResponse(t, br).Header
			if ra := h.Get("Retry-After"); !strings.HasPrefix(ra, "\xff\xfe7é") || len(ra) != 83 || h.Get("Retry-After-Ms") != "25\xe2\x82" {
				t.Fatalf("headers %q", h)
			}
		}},
		{Config{Mode: DupRetryAfter}, func(t *testing.T, br *bufio.Reader) {
			h := readResponse(t, br).Header
			if !slices.Equal(h.Values("Retry-After-Ms"), []string{"10", "20000"}) || !slices.Equal(h.Values("Retry-After"), []string{"1", "30"}) {
				t.Fatalf("headers %q", h)
			}
		}},
		{Config{Mode: Garbage}, func(t *testing.T, br *bufio.Reader) {
			b, err := io.ReadAll(br)
			if err != nil || !strings.HasPrefix(string(b), "SSH-2.0-") {
				t.Fatalf("%q, %v", b, err)
			}
		}},
		{Config{Mode: Reset}, func(t *testing.T, br *bufio.Reader) {
			b, err := io.ReadAll(br)
			if err == nil || !strings.HasPrefix(string(b), "HTTP/1.1 429 ") || strings.Contains(string(b), "\r\n\r\n") {
				t.Fatalf("%q, %v: want half a header, then a reset", b, err)
			}
		}},
		{Config{Mode: EndlessBody}, func(t *testing.T, br *bufio.Reader) {
			resp := readResponse(t, br)
			n, err := io.CopyN(io.Discard, resp.Body, 4<<20)
			if resp.ContentLength != -1 || n != 4<<20 || err != nil {
				t.Fatalf("length %d; read %d bytes: %v", resp.ContentLength, n, err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(string(tt.cfg.Mode), func(t *testing.T) {
			t.Parallel()
			s, err := Start(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if !strings.HasPrefix(s.URL(), "http://127.0.0.1:") {
				t.Fatalf("URL %s is not on loopback", s.URL())
			}
			_, br := ask(t, s, tcpDial(s))
			tt.check(t, br)
			if s.Requests() != 1 {
				t.Fatalf("%d requests read, want 1", s.Requests())
			}
		})
	}
}

func readResponse(t *testing.T, br *bufio.Reader) *http.Response {
	t.Helper()
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// TestKeepAlive: the modes that answer in full serve the next request on
// the same connection, as a real target would.
func TestKeepAlive(t *testing.T) {
	t.Parallel()
	s, err := Start(Config{Mode: DupRetryAfter})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, br := ask(t, s, tcpDial(s))
	readResponse(t, br)
	io.WriteString(c, request)
	readResponse(t, br)
	if s.Requests() != 2 {
		t.Fatalf("%d requests, want 2", s.Requests())
	}
}

// TestSlowModesOnTheBubbleClock serves over memnet inside a synctest
// bubble: the trickle, the lifetime and Close are timed exactly, and the
// bubble's end proves that no goroutine of the server outlived Close.
func TestSlowModesOnTheBubbleClock(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		cfg   Config
		bytes int           // body bytes the client reads
		took  time.Duration // how long they take
		end   error         // what reading one more byte gives, nil: no read
	}{
		{"trickle", Config{Mode: SlowBody, BodyBytes: 5, Trickle: 300 * time.Millisecond}, 5, 1500 * time.Millisecond, io.EOF},
		{"lifetime", Config{Mode: SlowBody, Trickle: time.Second, Lifetime: 3500 * time.Millisecond}, 3, 3 * time.Second, io.ErrUnexpectedEOF},
		{"endless until close", Config{Mode: EndlessBody}, 1 << 20, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ln := memnet.Listen()
				s, err := Serve(ln, tt.cfg)
				if err != nil {
					t.Fatal(err)
				}
				dial := func() (net.Conn, error) { return ln.DialContext(t.Context(), "tcp", "x") }
				start := time.Now()
				_, br := ask(t, s, dial)
				resp := readResponse(t, br)
				if n, err := io.CopyN(io.Discard, resp.Body, int64(tt.bytes)); n != int64(tt.bytes) || err != nil {
					t.Fatalf("read %d bytes: %v", n, err)
				}
				if took := time.Since(start); took != tt.took {
					t.Fatalf("%d bytes took %v, want %v", tt.bytes, took, tt.took)
				}
				if tt.end != nil {
					if _, err := resp.Body.Read(make([]byte, 1)); !errors.Is(err, tt.end) {
						t.Fatalf("then %v, want %v", err, tt.end)
					}
				}
				s.Close()
			})
		})
	}
}

func TestUnknownModeAndStatus(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{{}, {Mode: "polite"}, {Mode: Garbage, Status: 42}} {
		if s, err := Start(cfg); err == nil {
			s.Close()
			t.Errorf("%+v: started", cfg)
		}
	}
}

// TestCloseIsIdempotent: a second Close (t.Cleanup after a deferred one)
// is harmless.
func TestCloseIsIdempotent(t *testing.T) {
	t.Parallel()
	s, err := Start(Config{Mode: EndlessBody})
	if err != nil {
		t.Fatal(err)
	}
	_, br := ask(t, s, tcpDial(s))
	readResponse(t, br)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", strings.TrimPrefix(s.URL(), "http://")); err == nil {
		t.Fatal("dialed a closed server")
	}
}
