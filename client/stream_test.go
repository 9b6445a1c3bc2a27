package client

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// TestStreamHoldsTheEventNotTheBody: a streamed answer read as it comes
// holds the event in progress (at most maxEventBytes of it, and then its
// head and last bytes), not the stream: a long chat completion stream, a
// Responses stream whose final event repeats an output of 400 KB, an
// Anthropic stream of many deltas; each still gives its usage.
func TestStreamHoldsTheEventNotTheBody(t *testing.T) {
	t.Parallel()
	text := strings.Repeat("lorem ipsum ", 400<<10/12)
	chat := strings.Repeat(`data: {"choices":[{"delta":{"content":"lorem ipsum "}}],"usage":null}`+"\n\n", 3000) +
		`data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":8000,"prompt_tokens_details":{"cached_tokens":4}}}` + "\n\ndata: [DONE]\n\n"
	responses := "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"lorem\"}\n\n" +
		`event: response.completed` + "\n" + `data: {"type":"response.completed","response":{"id":"r","output":[{"type":"message","content":[{"type":"output_text","text":"` + text + `"}]}],` +
		`"usage":{"input_tokens":40,"input_tokens_details":{"cached_tokens":32},"output_tokens":90000},"user":null,"metadata":{}}}` + "\n\n"
	anthropic := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":20,\"cache_read_input_tokens\":1000,\"output_tokens\":1}}}\n\n" +
		strings.Repeat("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lorem ipsum \"}}\n\n", 3000) +
		"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":9000}}\n\n"
	for _, tt := range []struct {
		api, body                  string
		prompt, cached, completion int
	}{
		{APIOpenAI, chat, 7, 4, 8000},
		{APIResponses, responses, 40, 32, 90000},
		{APIAnthropic, anthropic, 1020, 1000, 9000},
	} {
		t.Run(tt.api, func(t *testing.T) {
			t.Parallel()
			tg := &Target{cfg: Config{API: tt.api, Stream: true}}
			s := &streamBody{usage: tg.usageFor(), newTail: tg.newBody}
			held := 0
			for p := []byte(tt.body); len(p) > 0; {
				n := min(streamRead, len(p))
				s.write(p[:n])
				p = p[n:]
				if s.events != nil {
					held = max(held, cap(s.events.data)+cap(s.events.head))
				}
			}
			s.end()
			if s.events == nil || s.tail != nil || held > 2*maxEventBytes+streamRead {
				t.Fatalf("read as events %v, into a tail %v; held up to %d bytes of a %d-byte stream", s.events != nil, s.tail != nil, held, len(tt.body))
			}
			r := results.Blank()
			s.usage.counted().fill(&r)
			if r.PromptTokens != tt.prompt || r.CachedTokens != tt.cached || r.CompletionTokens != tt.completion {
				t.Fatalf("usage %d/%d/%d, want %d/%d/%d", r.PromptTokens, r.CachedTokens, r.CompletionTokens, tt.prompt, tt.cached, tt.completion)
			}
		})
	}
}

// wholeEvents is the events of b as the client read them before it read
// a stream as it comes (eachEvent, kept here as the reference): the body
// whole, split into lines, each event's data lines joined by newlines.
func wholeEvents(b []byte) []string {
	var got []string
	var data []byte
	has := false
	flush := func() {
		if has {
			got = append(got, string(bytes.TrimSpace(data)))
		}
		data, has = data[:0], false
	}
	for len(b) > 0 {
		i := bytes.IndexAny(b, "\r\n")
		line := b
		if i < 0 {
			b = nil
		} else {
			line = b[:i]
			if b[i] == '\r' && i+1 < len(b) && b[i+1] == '\n' {
				i++
			}
			b = b[i+1:]
		}
		if len(line) == 0 {
			flush()
			continue
		}
		if v, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			if has {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
			has = true
		}
	}
	flush()
	return got
}

// FuzzEvents holds the event scanner, fed a stream in pieces of any size,
// to the whole-body reading it replaced: the same events, with the same
// data, on every stream whose events fit in maxEventBytes.
func FuzzEvents(f *testing.F) {
	f.Add([]byte("ta: cut\n\nevent: a\r\ndata: 1\r\ndata:2\r\n\r\n: comment\ndata: 3\r\rid: 4\ndata:  spaced \n\ndata: last"), uint8(3))
	f.Add([]byte("data: {\"usage\":null}\n\ndata: {\"usage\":{\"prompt_tokens\":1}}\n\ndata: [DONE]\n\n"), uint8(1))
	f.Add([]byte("data\ndata:\r\n\r\ndat: x\ndata:x\r"), uint8(2))
	f.Add([]byte(": keep-alive\n\ndata: {\"choices\":[{\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":null}\r\n\r\n"+
		"event: content_block_delta\ndata: {\"type\":\"content_block_delta\"}\n\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"b\"}\n\n"+
		"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"c\"}]}}]}\n\ndata: [DONE]"), uint8(5))
	f.Fuzz(func(t *testing.T, b []byte, piece uint8) {
		if len(b) > maxEventBytes {
			return
		}
		want := wholeEvents(b)
		var l eventLog
		e := newEvents(&l)
		size := 1 + int(piece)
		for p := b; len(p) > 0; {
			n := min(size, len(p))
			e.Write(p[:n])
			p = p[n:]
		}
		e.end()
		if strings.Join(l.got, "\x00") != strings.Join(want, "\x00") || len(l.got) != len(want) {
			t.Fatalf("in pieces of %d: events %q, read whole %q", size, l.got, want)
		}
		// Each dialect's reader, timed, marks as many content events,
		// the stream in pieces, as its rule finds in the events read
		// whole; the gaps are one fewer.
		for _, api := range []string{APIOpenAI, APIAnthropic, APIResponses, APIGemini} {
			d := dialectOf(api)
			var tm streamTiming
			e := newEvents(d.stream())
			e.tm = &tm
			for p := b; len(p) > 0; {
				n := min(size, len(p))
				tm.newRead()
				e.Write(p[:n])
				p = p[n:]
			}
			e.end()
			contents := 0
			for _, ev := range want {
				if d.stream().event([]byte(ev)) {
					contents++
				}
			}
			gaps := tm.gapCount()
			if tm.n != contents || gaps != max(contents-1, 0) {
				t.Fatalf("%s, in pieces of %d: %d content events timed (%d gaps), %d read whole", api, size, tm.n, gaps, contents)
			}
		}
	})
}

// streamOfTokens is a chat completion stream of n content events, each
// after a keep-alive comment, with its role chunk first and its usage
// last.
func streamOfTokens(n int) []byte {
	var b bytes.Buffer
	b.WriteString(": keep-alive\n\n" + `data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}` + "\n\n")
	for range n {
		b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":" word"},"finish_reason":null}],"usage":null}` + "\n\n")
	}
	b.WriteString(`data: {"id":"c","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":` + strconv.Itoa(n) + `}}` + "\n\ndata: [DONE]\n\n")
	return b.Bytes()
}

// chunkReader gives its bytes one event at a time, as a server that
// flushes each token does.
type chunkReader struct{ b []byte }

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	i := bytes.Index(c.b, []byte("\n\n"))
	if i < 0 {
		i = len(c.b)
	} else {
		i += 2
	}
	n := copy(p, c.b[:i])
	c.b = c.b[n:]
	return n, nil
}

// BenchmarkReadStream reads a streamed chat answer of 16, 256 and 4,096
// tokens, each its own event and read, as readResponse does (its usage,
// its content events timed): the allocations per answer must not grow
// with its length (issue 37: timing a stream costs no memory per token).
func BenchmarkReadStream(b *testing.B) {
	tg := &Target{cfg: Config{API: APIOpenAI, Stream: true}}
	for _, n := range []int{16, 256, 4096} {
		body := streamOfTokens(n)
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				s := &streamBody{usage: tg.usageFor(), newTail: tg.newBody}
				if err := s.readFrom(&chunkReader{body}); err != nil {
					b.Fatal(err)
				}
				r := results.Blank()
				s.usage.counted().fill(&r)
				s.timing.fill(time.Now(), &r)
				if r.CompletionTokens != n {
					b.Fatalf("usage %d, want %d", r.CompletionTokens, n)
				}
			}
		})
	}
}

// TestReadStreamAllocations: reading a streamed answer, its content events
// timed, allocates as much for 4,096 tokens as for 16. Not under -race,
// whose sync.Pool drops a share of what is put back: an event's room from
// the pool is then a new one.
func TestReadStreamAllocations(t *testing.T) {
	if testkit.Race {
		t.Skip("the race detector's sync.Pool drops rooms at random")
	}
	tg := &Target{cfg: Config{API: APIOpenAI, Stream: true}}
	allocs := func(n int) float64 {
		body := streamOfTokens(n)
		return testing.AllocsPerRun(20, func() {
			s := &streamBody{usage: tg.usageFor(), newTail: tg.newBody}
			s.readFrom(&chunkReader{body})
			r := results.Blank()
			s.timing.fill(time.Now(), &r)
		})
	}
	if short, long := allocs(16), allocs(4096); long > short {
		t.Fatalf("%v allocations for 16 tokens, %v for 4,096", short, long)
	}
}

// contentRef is what each dialect's content rule says of v, a JSON
// document decoded by encoding/json: the reference the in-place readers
// are held to (FuzzContent).
func contentRef(api string, v any) bool {
	obj, _ := v.(map[string]any)
	nonEmpty := func(x any) bool { s, ok := x.(string); return ok && s != "" }
	objects := func(x any) []map[string]any {
		a, _ := x.([]any)
		var out []map[string]any
		for _, e := range a {
			if m, ok := e.(map[string]any); ok {
				out = append(out, m)
			}
		}
		return out
	}
	switch api {
	case APIAnthropic:
		return obj["type"] == "content_block_delta"
	case APIResponses:
		switch obj["type"] {
		case "response.output_text.delta", "response.refusal.delta", "response.function_call_arguments.delta", "response.reasoning_text.delta":
			return true
		}
		return false
	case APIGemini:
		for _, c := range objects(obj["candidates"]) {
			content, _ := c["content"].(map[string]any)
			for _, p := range objects(content["parts"]) {
				if _, call := p["functionCall"]; call || nonEmpty(p["text"]) {
					return true
				}
			}
		}
		return false
	}
	for _, c := range objects(obj["choices"]) {
		if nonEmpty(c["text"]) {
			return true
		}
		d, _ := c["delta"].(map[string]any)
		calls, _ := d["tool_calls"].([]any)
		if nonEmpty(d["content"]) || nonEmpty(d["refusal"]) || nonEmpty(d["reasoning_content"]) || nonEmpty(d["reasoning"]) || len(calls) > 0 {
			return true
		}
	}
	return false
}

// FuzzContent holds each dialect's content reader (jsonscan, in place,
// and for chat chunks that name their usage the one pass that reads both)
// to contentRef on encoding/json's reading of the same document: on
// every valid document, re-encoded as encoding/json writes it (no
// repeated or case-folded keys, which the two read otherwise); on any
// input, no panic.
func FuzzContent(f *testing.F) {
	for _, s := range []string{
		`{"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""}}],"usage":null}`,
		`{"choices":[{"delta":{"content":" w"}}],"usage":null}`,
		`{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"f"}}]}}]}`,
		`{"choices":[],"prompt_filter_results":[{"prompt_index":0}]}`,
		`{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2}}`,
		`{"choices":[{"text":"x"}]}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}`,
		`{"type":"message_start","message":{"usage":{"input_tokens":5}}}`,
		`{"type":"response.output_text.delta","delta":"x"}`,
		`{"type":"response.created","response":{"usage":null}}`,
		`{"candidates":[{"content":{"parts":[{"text":"x"}]}}],"usageMetadata":{"promptTokenCount":5}}`,
		`{"candidates":[{"content":{"parts":[{"functionCall":{"name":"f"}}]}}]}`,
		`{"candidates":[{"content":{"parts":[{"text":""}]}}]}`,
	} {
		f.Add([]byte(s))
	}
	readers := map[string]func([]byte) bool{
		APIOpenAI:    chatContent,
		"chunk":      func(b []byte) bool { return (&chatStream{}).event(b) },
		APIAnthropic: anthropicContent,
		APIResponses: responsesContent,
		APIGemini:    geminiContent,
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		for _, read := range readers {
			read(doc) // no panic, whatever it is
		}
		var v any
		if json.Unmarshal(doc, &v) != nil {
			return
		}
		canon, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		for api, read := range readers {
			ref := api
			if api == "chunk" {
				ref = APIOpenAI
			}
			if got, want := read(canon), contentRef(ref, v); got != want {
				t.Fatalf("%s: %s read as content %v, encoding/json's reading %v", api, canon, got, want)
			}
		}
	})
}

// TestLongContentEventsAreTokens: a content event longer than
// maxEventBytes, read from its head and tail, is still a token in every
// dialect; a long event that is no content (a Responses API's final
// event, Azure's prompt filter) is not.
func TestLongContentEventsAreTokens(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("lorem ", 3*maxEventBytes/6)
	for _, tt := range []struct {
		api, data string
		content   bool
	}{
		{APIOpenAI, `{"id":"c","choices":[{"index":0,"delta":{"content":"` + long + `"}}],"usage":null}`, true},
		{APIOpenAI, `{"choices":[],"prompt_filter_results":[{"prompt_index":0,"note":"` + long + `"}]}`, false},
		{APIAnthropic, `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"` + long + `"}}`, true},
		{APIAnthropic, `{"type":"message_start","message":{"content":[],"note":"` + long + `","usage":{"input_tokens":3}}}`, false},
		{APIResponses, `{"type":"response.output_text.delta","delta":"` + long + `"}`, true},
		{APIResponses, `{"type":"response.completed","response":{"output":[{"text":"` + long + `"}],"usage":{"input_tokens":3,"output_tokens":9}}}`, false},
		{APIGemini, `{"candidates":[{"content":{"parts":[{"text":"` + long + `"}]}}]}`, true},
	} {
		var tm streamTiming
		e := newEvents(dialectOf(tt.api).stream())
		e.tm = &tm
		stream := []byte("data: " + tt.data + "\n\n")
		for p := stream; len(p) > 0; {
			n := min(streamRead, len(p))
			tm.newRead()
			e.Write(p[:n])
			p = p[n:]
		}
		e.end()
		if (tm.n == 1) != tt.content {
			t.Errorf("%s %.40s…: %d content events, want content %v", tt.api, tt.data, tm.n, tt.content)
		}
	}
}

// TestStreamBetweenEventsHoldsNoRoom: between two events an open stream
// holds no room for the next (the room of the one read went back to
// eventPool), and an event cut across reads keeps its room until it ends.
func TestStreamBetweenEventsHoldsNoRoom(t *testing.T) {
	t.Parallel()
	tg := &Target{cfg: Config{API: APIOpenAI, Stream: true}}
	s := &streamBody{usage: tg.usageFor(), newTail: tg.newBody}
	event := `data: {"choices":[{"delta":{"content":"lorem ipsum "}}],"usage":null}` + "\n\n"
	s.write([]byte(event + event))
	if s.events == nil || s.events.buf != nil || cap(s.events.data) != 0 {
		t.Fatalf("after two whole events: read as events %v, a room held %v", s.events != nil, s.events != nil && s.events.buf != nil)
	}
	s.write([]byte(event[:30]))
	if s.events.buf == nil || string(s.events.data) == "" {
		t.Fatal("an event cut across reads lost its room")
	}
	s.write([]byte(event[30:]))
	if s.events.buf != nil {
		t.Fatal("an event ended across reads kept its room")
	}
}

// TestStreamBodyBound: a streamed body is read to MaxBodyBytes and one
// byte more, no further, whatever the reader's pieces, as through
// io.LimitReader (which streamBody.readFrom no longer allocates; past
// MaxBodyBytes the row's error is body); a body of MaxBodyBytes is read
// whole.
func TestStreamBodyBound(t *testing.T) {
	t.Parallel()
	event := []byte("data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lorem ipsum \"}}]}\n\n")
	over := bytes.Repeat(event, MaxBodyBytes/len(event)+2)
	readers := map[string]func(io.Reader) io.Reader{
		"whole":    func(r io.Reader) io.Reader { return r },
		"halves":   iotest.HalfReader,
		"data+EOF": iotest.DataErrReader,
	}
	for _, size := range []int{MaxBodyBytes - 1, MaxBodyBytes, MaxBodyBytes + 1, len(over)} {
		for name, wrap := range readers {
			t.Run(fmt.Sprint(name, size), func(t *testing.T) {
				t.Parallel()
				tg := &Target{cfg: Config{API: APIOpenAI, Stream: true}}
				b := responseBody{stream: &streamBody{usage: tg.usageFor(), newTail: tg.newBody}}
				src := bytes.NewReader(over[:size])
				if err := b.readFrom(wrap(src)); err != nil {
					t.Fatal(err)
				}
				read := int64(size) - int64(src.Len())
				if name == "data+EOF" {
					read = b.n() // iotest.DataErrReader reads one piece ahead
				}
				if want := min(int64(size), MaxBodyBytes+1); b.n() != want || read != want {
					t.Fatalf("%d bytes counted, %d read, want %d", b.n(), read, want)
				}
			})
		}
	}
}
