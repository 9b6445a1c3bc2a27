package client

import (
	"bytes"
	"strings"
	"testing"

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
	})
}
