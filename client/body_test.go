package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestBodyTail: whatever the sizes of the writes, the tail holds the last
// keptBodyBytes of what was written, the head its first keptHeadBytes,
// and the count is of everything.
func TestBodyTail(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for i := range 3 * keptBodyBytes / 10 {
		fmt.Fprintf(&all, "%09d,", i)
	}
	for _, chunk := range []int{7, 4096, 32 << 10, keptBodyBytes - 1, keptBodyBytes, keptBodyBytes + 5, 1 << 20} {
		t.Run(fmt.Sprint(chunk), func(t *testing.T) {
			t.Parallel()
			tail := bodyTail{headCap: keptHeadBytes}
			src := all.Bytes()
			for len(src) > 0 {
				n := min(chunk, len(src))
				tail.Write(src[:n])
				src = src[n:]
			}
			want := all.Bytes()[all.Len()-keptBodyBytes:]
			if tail.n != int64(all.Len()) || !bytes.Equal(tail.buf, want) {
				t.Fatalf("count %d of %d; tail of %d bytes, equal %v", tail.n, all.Len(), len(tail.buf), bytes.Equal(tail.buf, want))
			}
			if !bytes.Equal(tail.head, all.Bytes()[:keptHeadBytes]) {
				t.Fatalf("head of %d bytes, not the first %d", len(tail.head), keptHeadBytes)
			}
			if cap(tail.buf) > 2*keptBodyBytes {
				t.Fatalf("the tail holds %d bytes of capacity", cap(tail.buf))
			}
		})
	}
}

// TestUsageOfLongBodies: a 200 answer longer than what is kept whole
// still gives its usage, from the end of the body, be it one JSON object
// or a stream; what a content string says cannot pass for usage.
func TestUsageOfLongBodies(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("lorem ipsum ", 3*keptBodyBytes/12)
	tests := []struct {
		name                       string
		body                       string
		prompt, cached, completion int
		err                        string
	}{
		{"short JSON", `{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":12,"completion_tokens":3}}`, 12, results.None, 3, ""},
		{"long JSON, usage last", `{"choices":[{"message":{"content":"` + long + `"}}],"usage":{"prompt_tokens":1200,"completion_tokens":9000,"prompt_tokens_details":{"cached_tokens":1024}},"system_fingerprint":"fp"}`, 1200, 1024, 9000, ""},
		{"long JSON, no usage, a quoted one in the content", `{"choices":[{"message":{"content":"` + long + `\"usage\": {\"prompt_tokens\": 5}"}}]}`, results.None, results.None, results.None, ""},
		{"long stream", strings.Repeat(`data: {"choices":[{"delta":{"content":"lorem ipsum "}}]}`+"\n\n", 3*keptBodyBytes/60) +
			`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":8000}}` + "\n\ndata: [DONE]\n\n", 7, results.None, 8000, ""},
		{"over MaxBodyBytes", `{"choices":[{"message":{"content":"` + strings.Repeat("x", MaxBodyBytes) + `"}}],"usage":{"prompt_tokens":1,"completion_tokens":1}}`,
			results.None, results.None, results.None, results.ClassBody},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, tt.body) }))
			defer srv.Close()
			r := send(newAzure(t, srv.URL))
			if r.Status != 200 || r.Error != tt.err || r.PromptTokens != tt.prompt || r.CachedTokens != tt.cached || r.CompletionTokens != tt.completion {
				t.Fatalf("row %+v, want usage %d/%d/%d, error %q", r, tt.prompt, tt.cached, tt.completion, tt.err)
			}
		})
	}
}

// TestBodyTailReadFrom: read straight into the tail's storage, whatever
// the reader's pieces and the body's length around what is kept, the
// tail, head and count are the ones Write keeps, and the storage never
// passes keptBodyBytes+tailRead.
func TestBodyTailReadFrom(t *testing.T) {
	t.Parallel()
	var all bytes.Buffer
	for i := range 3 * keptBodyBytes / 10 {
		fmt.Fprintf(&all, "%09d,", i)
	}
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"one byte": iotest.OneByteReader,
		"halves":   iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for _, size := range []int{0, 1, minRead, keptHeadBytes + 1, keptBodyBytes - 1, keptBodyBytes, keptBodyBytes + 1, keptBodyBytes + minRead + 3, keptBodyBytes + tailRead + 1, all.Len()} {
		for name, wrap := range readers {
			t.Run(fmt.Sprint(name, size), func(t *testing.T) {
				t.Parallel()
				src := all.Bytes()[:size]
				var want bodyTail
				want.headCap = keptHeadBytes
				want.Write(src)
				got := bodyTail{headCap: keptHeadBytes}
				n, err := got.readFrom(wrap(bytes.NewReader(src)))
				if err != nil || n != int64(size) || got.n != want.n {
					t.Fatalf("read %d (count %d), %v; want %d", n, got.n, err, size)
				}
				if !bytes.Equal(got.buf, want.buf) || !bytes.Equal(got.head, want.head) {
					t.Fatalf("tail of %d bytes (want %d), head of %d (want %d): not the same", len(got.buf), len(want.buf), len(got.head), len(want.head))
				}
				if cap(got.buf) > keptBodyBytes+tailRead {
					t.Fatalf("the tail holds %d bytes of capacity", cap(got.buf))
				}
			})
		}
	}
}

// TestStreamTTFBIsTheHeaders: every answer's ttfb_ms is the time to its
// headers (sent at once here, the rest held back until the client reads
// past them), a streamed one's too since issue 37; a streamed answer's
// ttft_ms is its first token, and no other row has one (a whole answer,
// a refusal).
//
// The server holds the body until the client's connection is read past
// the headers (bodyWatch): the attempt has taken its time to the headers
// by then, on any machine at any load, and the body is written hold
// later. The client's times are read against the server's on one clock:
// its start lies between began (before send) and the request's arrival,
// so began+ttfb is at or before the client's time to the headers, which
// must be at or before the body was asked for, and arrival+ttft at or
// after its first token, which must be at or after the token was written.
// A client that took either at the other end is caught unless this
// process stalled for hold between began and the request's arrival.
func TestStreamTTFBIsTheHeaders(t *testing.T) {
	t.Parallel()
	const hold = 50 * time.Millisecond
	for _, tc := range []struct {
		name   string
		path   string
		stream bool
	}{
		{"streamed", "", true},
		{"whole", "", false},
		{"streamed, refused", "/refuse", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The server's times: the request's arrival, the body asked
			// for, the body written.
			type times struct{ arrived, asked, written time.Time }
			served := make(chan times, 1)
			wants := &bodyWatch{asked: make(chan struct{})}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				var at times
				defer func() { served <- at }()
				at.arrived = time.Now()
				if strings.HasPrefix(r.URL.Path, "/refuse") {
					w.Header().Set("Retry-After-Ms", "5")
					w.WriteHeader(http.StatusTooManyRequests)
				} else {
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
				}
				w.(http.Flusher).Flush()
				select {
				case <-wants.asked:
				case <-r.Context().Done():
					return
				}
				at.asked = wants.at
				time.Sleep(hold)
				at.written = time.Now()
				if strings.HasPrefix(r.URL.Path, "/refuse") {
					io.WriteString(w, `{"error":{"code":"429"}}`)
					return
				}
				io.WriteString(w, `data: {"choices":[{"delta":{"content":"hi"}}],"usage":null}`+"\n\n")
				io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}`+"\n\ndata: [DONE]\n\n")
			}))
			defer srv.Close()
			tg, err := New(Config{API: APIAzure, Endpoint: srv.URL + tc.path, Deployment: "d", Key: "sk-canary", KeyHeader: "api-key",
				PromptTokens: 5, MaxTokens: 1, Stream: tc.stream, Timeout: 5 * time.Second,
				DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
					c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
					if err != nil {
						return nil, err
					}
					wants.Conn = c
					return wants, nil
				}})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			began := time.Now()
			r := send(tg)
			st := <-served
			arrived, asked, written := st.arrived, st.asked, st.written
			at := func(from time.Time, msec float64) time.Time {
				return from.Add(time.Duration(msec * float64(time.Millisecond)))
			}
			if written.IsZero() || r.TTFBMS > r.LatencyMS || at(arrived, r.LatencyMS).Before(written) {
				t.Fatalf("ttfb %v ms, latency %v ms (the body written %v after the request arrived): %+v", r.TTFBMS, r.LatencyMS, written.Sub(arrived), r)
			}
			if at(began, r.TTFBMS).After(asked) {
				t.Errorf("ttfb %v ms, after the client read past the headers (%v after send began): want the headers' time", r.TTFBMS, asked.Sub(began))
			}
			if ok := r.Status == 200; tc.stream && ok != (!at(arrived, r.TTFTMS).Before(written) && r.TTFTMS <= r.LatencyMS) || !(tc.stream && ok) && r.TTFTMS != results.None {
				t.Errorf("ttft %v ms, latency %v ms (the token written %v after the request arrived): a streamed answer's is its first token, no other row has one", r.TTFTMS, r.LatencyMS, written.Sub(arrived))
			}
		})
	}
}

// bodyWatch is one connection of a client's that closes asked (once) at
// the first read after the bytes it has read hold the end of a response's
// headers, and notes when: the client reads the body.
type bodyWatch struct {
	net.Conn
	asked   chan struct{}
	at      time.Time
	last    []byte // the last bytes read, to find "\r\n\r\n" across reads
	headers bool
}

func (c *bodyWatch) Read(p []byte) (int, error) {
	if c.headers && c.at.IsZero() {
		c.at = time.Now()
		close(c.asked)
	}
	n, err := c.Conn.Read(p)
	if !c.headers {
		c.last = append(c.last, p[:n]...)
		c.headers = bytes.Contains(c.last, []byte("\r\n\r\n"))
		c.last = c.last[max(0, len(c.last)-3):]
	}
	return n, err
}

// TestStreamRowsWithSmallBuffers: through the connection's small read
// buffer (ReadBufferSize) and readFrom's own storage, a stream of many
// small events, longer than the tail kept, keeps its usage and time to
// first byte, and a 429 with a header line longer than the buffer keeps
// its advised wait.
func TestStreamRowsWithSmallBuffers(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("x", 3*ReadBufferSize)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/refuse") {
			w.Header().Set("X-Long", long)
			w.Header().Set("Retry-After-Ms", "1234")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		f := w.(http.Flusher)
		for i := range 1200 { // 90 KB: more than keptBodyBytes
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\"tok%d \"}}],\"usage\":null}\n\n", i)
			f.Flush()
		}
		io.WriteString(w, `data: {"choices":[],"usage":{"prompt_tokens":211,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":128}}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer srv.Close()
	tg, err := New(Config{API: APIAzure, Endpoint: srv.URL, Deployment: "d", Key: "sk-canary", KeyHeader: "api-key",
		PromptTokens: 200, MaxTokens: 300, Stream: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	r := send(tg)
	if r.Status != 200 || r.Error != "" || r.PromptTokens != 211 || r.CompletionTokens != 300 || r.CachedTokens != 128 {
		t.Fatalf("stream row %+v: usage lost", r)
	}
	if !(r.TTFBMS > 0 && r.TTFBMS <= r.LatencyMS) {
		t.Fatalf("stream row ttfb %v ms, latency %v ms", r.TTFBMS, r.LatencyMS)
	}
	refuse, err := New(Config{API: APIAzure, Endpoint: srv.URL + "/refuse", Deployment: "d", Key: "sk-canary", KeyHeader: "api-key",
		PromptTokens: 200, MaxTokens: 300, Stream: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer refuse.Close()
	r = send(refuse)
	if r.Status != 429 || r.Error != "" || r.RetryAfterMS != "1234" || r.WaitMS != 1234 || !(r.TTFBMS > 0) {
		t.Fatalf("refusal row %+v: advice lost", r)
	}
}
