package client

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
	"github.com/ptuprobe/ptuprobe/results"
)

// piece is a part of a scripted stream: written and flushed after a wait.
type piece struct {
	after time.Duration
	text  string
}

// prelude is what may come before a stream's first data, cut across
// reads: a keep-alive comment, events without data or with empty data,
// other fields, a comment that holds "data: x" cut in two, the [DONE]
// that ends an OpenAI stream, then the first data line's field name in
// two reads. It spans 10 ms.
var prelude = []piece{
	{2 * time.Millisecond, ": keep-alive\n\n"},
	{time.Millisecond, "event: ping\n\n"},
	{time.Millisecond, "data:\n\n"},
	{time.Millisecond, "data:  \t\r\n\r\n"},
	{time.Millisecond, "id: 7\rretry: 1000\r\r: da"},
	{time.Millisecond, "ta: x\n\n"},
	{time.Millisecond, "data: [DONE]\n\n"},
	{time.Millisecond, "da"},
	{time.Millisecond, "ta: "},
}

// TestStreamTTFBSkipsWhatIsNoData: in every streaming dialect, ttfb_ms
// is the time to the first byte of the first data, not to a comment, an
// event without data or empty data before it, however the reads cut
// them, and the usage is still read (a stream that starts with a comment
// once lost it); a stream without data keeps the time to its headers.
// On a fake clock (a synctest bubble, memnet), so every time is exact.
func TestStreamTTFBSkipsWhatIsNoData(t *testing.T) {
	t.Parallel()
	const firstData = 300 * time.Millisecond
	chat := []piece{{firstData, `{"choices":[{"delta":{"content":"hi"}}],"usage":null}` + "\n\n" +
		`data: {"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1}}` + "\n\ndata: [DONE]\n\n"}}
	tests := []struct {
		name   string
		cfg    Config
		stream []piece // after the prelude
		ttfb   float64 // ms
	}{
		{"azure", Config{API: APIAzure, Endpoint: "http://sim.invalid", Deployment: "d"}, chat, 310},
		{"openai", Config{API: APIOpenAI, URL: "http://sim.invalid/v1/chat/completions"}, chat, 310},
		{"responses", Config{API: APIResponses, URL: "http://sim.invalid/v1/responses", Model: "m"},
			[]piece{{firstData, `{"type":"response.output_text.delta","delta":"hi"}` + "\n\nevent: response.completed\n" +
				`data: {"type":"response.completed","response":{"usage":{"input_tokens":5,"output_tokens":1}}}` + "\n\n"}}, 310},
		{"anthropic", Config{API: APIAnthropic, URL: "http://sim.invalid/v1/messages", Model: "m"},
			[]piece{{firstData, `{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}` + "\n\nevent: message_delta\n" +
				`data: {"type":"message_delta","usage":{"output_tokens":1}}` + "\n\n"}}, 310},
		{"gemini", Config{API: APIGemini, URL: "http://sim.invalid", Model: "m"},
			[]piece{{firstData, `{"candidates":[{"content":{"parts":[{"text":"hi"}]}}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":1}}` + "\r\n\r\n"}}, 310},
		{"no data", Config{API: APIOpenAI, URL: "http://sim.invalid/v1/chat/completions"}, []piece{{firstData, "[DONE]\n\n"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var r results.Record
			synctest.Test(t, func(t *testing.T) {
				h := http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
					io.Copy(io.Discard, req.Body)
					w.Header().Set("Content-Type", "text/event-stream")
					w.WriteHeader(http.StatusOK)
					w.(http.Flusher).Flush()
					for _, p := range append(append([]piece{}, prelude...), tt.stream...) {
						time.Sleep(p.after)
						io.WriteString(w, p.text)
						w.(http.Flusher).Flush()
					}
				})
				ln := memnet.Listen()
				srv := &http.Server{Handler: h}
				go srv.Serve(ln)
				defer srv.Close()
				cfg := tt.cfg
				cfg.PromptTokens, cfg.MaxTokens, cfg.Stream, cfg.DialContext = 5, 1, true, ln.DialContext
				tg, err := New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				r = results.Blank()
				tg.attempt(context.Background(), 0, &r)
			})
			if r.Status != 200 || r.Error != "" || r.TTFBMS != tt.ttfb || r.LatencyMS != 310 {
				t.Fatalf("status %d error %q ttfb %v ms latency %v ms; want 200, ttfb %v ms, latency 310 ms", r.Status, r.Error, r.TTFBMS, r.LatencyMS, tt.ttfb)
			}
			if tt.ttfb > 0 && (r.PromptTokens != 5 || r.CompletionTokens != 1) {
				t.Errorf("usage %d/%d, want 5/1", r.PromptTokens, r.CompletionTokens)
			}
		})
	}
}

// lineEnd is a line end of a server-sent event stream: CRLF, LF or CR.
var lineEnd = regexp.MustCompile("\r\n|\r|\n")

// hasData is what firstEvent is to find, read whole, line by line: a data
// field whose data, trimmed of spaces and tabs, is neither empty nor
// [DONE]; on the last line, without its line end, data that cannot be
// the start of [DONE] either.
func hasData(stream []byte) bool {
	lines := lineEnd.Split(string(stream), -1)
	for i, line := range lines {
		v, ok := strings.CutPrefix(line, "data:")
		v = strings.Trim(v, " \t")
		if !ok || v == "" || v == done {
			continue
		}
		if i < len(lines)-1 || !strings.HasPrefix(done, strings.TrimLeft(strings.TrimPrefix(line, "data:"), " \t")) {
			return true
		}
	}
	return false
}

// FuzzFirstEvent: firstEvent finds data where a whole-stream reading
// does, and at the same byte however the stream is cut into reads.
func FuzzFirstEvent(f *testing.F) {
	for _, s := range []string{
		": keep-alive\n\ndata: {\"a\":1}\n\n",
		"event: ping\n\ndata:\n\ndata:  \t\r\n\r\ndata: [DONE]\n\ndata: x",
		"id: 7\rretry: 1000\r\r: data: x\n\ndata: [DO\n",
		"data: [DONE] x\n",
		"data:[DONE]  \ndata",
		"dat: x\ndata:\tdata\r\n",
	} {
		f.Add([]byte(s), uint64(0x0102030405))
	}
	f.Fuzz(func(t *testing.T, stream []byte, cuts uint64) {
		// Byte by byte: where the data is proven.
		at := -1
		var one firstEvent
		for i := range stream {
			if one.scan(stream[i : i+1]) {
				at = i
				break
			}
		}
		if want := hasData(stream); (at >= 0) != want {
			t.Fatalf("%q: data found at %d; a whole reading finds data: %v", stream, at, want)
		}
		// In reads of 1 to 8 bytes, as cuts says: the read that holds it.
		var cut firstEvent
		for start := 0; start < len(stream); cuts >>= 3 {
			end := min(start+1+int(cuts&7), len(stream))
			found := cut.scan(stream[start:end])
			if found != (at >= start && at < end) {
				t.Fatalf("%q: the read of [%d, %d) finds data: %v; byte by byte at %d", stream, start, end, found, at)
			}
			if found {
				break
			}
			start = end
		}
	})
}
