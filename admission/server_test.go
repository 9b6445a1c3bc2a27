package admission

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
)

// reply is one scripted answer: status, headers, body, after a delay (on
// the fake clock under synctest); with bodyDelay, the headers go at once
// and the body that long after them.
type reply struct {
	status    int
	header    map[string]string
	body      string
	delay     time.Duration
	bodyDelay time.Duration
}

func refuse(status int, header ...string) reply {
	r := reply{status: status, header: map[string]string{}, body: `{"error":{"code":"429"}}`}
	for i := 0; i+1 < len(header); i += 2 {
		r.header[header[i]] = header[i+1]
	}
	return r
}

var ok200 = reply{status: 200, body: `{"ok":true}`}

// hit is one request as the server saw it.
type hit struct {
	path   string
	at     time.Time
	header http.Header
	body   string
}

// script answers each path with its replies in turn, the last one
// repeated; it records every request.
type script struct {
	mu      sync.Mutex
	replies map[string][]reply
	hits    []hit
	counts  map[string]int
}

func newScript(replies map[string][]reply) *script {
	return &script{replies: replies, counts: map[string]int{}}
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.hits = append(s.hits, hit{path: r.URL.Path, at: time.Now(), header: r.Header.Clone(), body: string(body)})
	rs := s.replies[r.URL.Path]
	i := min(s.counts[r.URL.Path], len(rs)-1)
	s.counts[r.URL.Path]++
	s.mu.Unlock()
	if len(rs) == 0 {
		http.NotFound(w, r)
		return
	}
	rep := rs[i]
	if rep.delay > 0 {
		// A client that goes away ends the delay, so that no handler
		// outlives a synctest bubble.
		select {
		case <-time.After(rep.delay):
		case <-r.Context().Done():
			return
		}
	}
	for k, v := range rep.header {
		w.Header().Set(k, v)
	}
	w.WriteHeader(rep.status)
	if rep.bodyDelay > 0 {
		w.(http.Flusher).Flush()
		select {
		case <-time.After(rep.bodyDelay):
		case <-r.Context().Done():
			return
		}
	}
	io.WriteString(w, rep.body)
}

// offsets is when each request to path arrived, after start.
func (s *script) offsets(path string, start time.Time) []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []time.Duration
	for _, h := range s.hits {
		if h.path == path {
			out = append(out, h.at.Sub(start))
		}
	}
	return out
}

func (s *script) seen(path string) []hit {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []hit
	for _, h := range s.hits {
		if h.path == path {
			out = append(out, h)
		}
	}
	return out
}

// serveMem serves h over an in-memory network, for a synctest bubble, and
// returns the HTTP transport that reaches it; both close at cleanup.
func serveMem(t *testing.T, h http.Handler) *http.Transport {
	ln := memnet.Listen()
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	tr := &http.Transport{DialContext: ln.DialContext}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return tr
}

// lab is a Transport over a scripted server in a synctest bubble, with
// every Decision recorded.
type lab struct {
	t     *testing.T
	srv   *script
	tr    *Transport
	start time.Time

	mu        sync.Mutex
	decisions []Decision
}

func newLab(t *testing.T, p Policy, replies map[string][]reply) *lab {
	t.Helper()
	l := &lab{t: t, srv: newScript(replies), start: time.Now()}
	user := p.Observe
	p.Observe = func(d Decision) {
		l.mu.Lock()
		l.decisions = append(l.decisions, d)
		l.mu.Unlock()
		if user != nil {
			user(d)
		}
	}
	tr, err := New(serveMem(t, l.srv), p)
	if err != nil {
		t.Fatal(err)
	}
	l.tr = tr
	return l
}

// do sends a request to path through the Transport; a response's body is
// read and closed, and returned.
func (l *lab) do(ctx context.Context, method, path, body string) (status int, respBody string, err error) {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://primary.invalid"+path, rd)
	if err != nil {
		l.t.Fatal(err)
	}
	resp, err := l.tr.RoundTrip(req)
	if err != nil {
		return 0, "", err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(b), nil
}

func (l *lab) recorded() []Decision {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Decision(nil), l.decisions...)
}

// toPath is a Fallback that sends the request to another path of the same
// server (the in-memory network reaches one server whatever the host).
func toPath(path string) func(*http.Request) (*http.Request, error) {
	return func(r *http.Request) (*http.Request, error) {
		r.URL.Host = "fallback.invalid"
		r.URL.Path = path
		r.Host = ""
		return r, nil
	}
}

// fixed is a Rand that always returns u.
func fixed(u float64) func() float64 { return func() float64 { return u } }

func actions(ds []Decision) []Action {
	out := make([]Action, len(ds))
	for i, d := range ds {
		out[i] = d.Action
	}
	return out
}
