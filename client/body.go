package client

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"github.com/ptuprobe/ptuprobe/results"
)

// keptBodyBytes is how much of a response body is kept for its usage
// block: the whole of a usual answer (64 KiB is some 12,000 tokens of
// text), the end of a longer one, which is where the usage block is (the
// last members of a chat completion, the last event of a stream). The
// rest is read and counted, up to MaxBodyBytes, but not kept: 256
// requests in flight against endless bodies peaked at 174 MB (1,000 at
// 330 MB) when each body was kept up to 1 MiB.
const keptBodyBytes = 64 << 10

// keptHeadBytes is how much of the start of a body is kept as well when
// the usage is split between start and end: an Anthropic stream's
// message_start event, a few hundred bytes, is its first.
const keptHeadBytes = 8 << 10

// bodyTail is an io.Writer that counts what it is given and keeps the
// last keptBodyBytes of it, and its first headCap bytes in head.
type bodyTail struct {
	buf     []byte
	n       int64
	head    []byte
	headCap int
}

// copyBuffers lend readFrom its buffer: io.Copy would allocate 32 KiB per
// response, which at thousands of responses a second was four fifths of
// everything the client allocated, and most of its garbage collection.
var copyBuffers = sync.Pool{New: func() any { b := make([]byte, 8<<10); return &b }}

// readFrom reads r to its end into b, through a pooled buffer.
func (b *bodyTail) readFrom(r io.Reader) (int64, error) {
	buf := copyBuffers.Get().(*[]byte)
	defer copyBuffers.Put(buf)
	return io.CopyBuffer(b, r, *buf)
}

func (b *bodyTail) Write(p []byte) (int, error) {
	if room := b.headCap - len(b.head); room > 0 {
		b.head = append(b.head, p[:min(room, len(p))]...)
	}
	b.n += int64(len(p))
	if len(p) >= keptBodyBytes {
		b.buf = append(b.buf[:0], p[len(p)-keptBodyBytes:]...)
		return len(p), nil
	}
	if over := len(b.buf) + len(p) - keptBodyBytes; over > 0 {
		b.buf = b.buf[:copy(b.buf, b.buf[over:])]
	}
	b.buf = append(b.buf, p...)
	return len(p), nil
}

// newBody is what a response body is read into: its tail, and for an
// Anthropic stream its head too.
func (t *Target) newBody() bodyTail {
	if t.cfg.API == APIAnthropic && t.cfg.Stream {
		return bodyTail{headCap: keptHeadBytes}
	}
	return bodyTail{}
}

// parseUsage fills rec's token counts from a successful response body, in
// the dialect of the target's API (raw targets are read as OpenAI's).
func (t *Target) parseUsage(b *bodyTail, rec *results.Record) {
	switch t.cfg.API {
	case APIAnthropic:
		parseAnthropicUsage(b, rec)
	case APIGemini:
		parseGeminiUsage(b, rec)
	case APIResponses:
		parseResponsesUsage(b, rec)
	default:
		parseUsage(b.buf, b.n <= keptBodyBytes, rec)
	}
}

type usage struct {
	PromptTokens        *int `json:"prompt_tokens"`
	CompletionTokens    *int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

type usageBody struct {
	Usage *usage `json:"usage"`
}

// parseUsage reads the OpenAI usage block from body, the whole response
// body when whole, else its last keptBodyBytes. A body that is not JSON
// (or a server-sent event stream whose last data line carries usage) is
// handled without error: absent fields stay None.
func parseUsage(body []byte, whole bool, rec *results.Record) {
	b := bytes.TrimSpace(body)
	var u *usage
	switch {
	case bytes.HasPrefix(b, []byte("data:")) || !whole && bytes.Contains(b, []byte("\ndata:")):
		var ub usageBody
		if ev := lastUsageEvent(b); len(ev) > 0 && ev[0] == '{' && json.Unmarshal(ev, &ub) == nil {
			u = ub.Usage
		}
	case whole:
		var ub usageBody
		if len(b) > 0 && b[0] == '{' && json.Unmarshal(b, &ub) == nil {
			u = ub.Usage
		}
	default:
		u = lastUsageMember(b)
	}
	if u == nil {
		return
	}
	if p := u.PromptTokens; p != nil && *p >= 0 {
		rec.PromptTokens = *p
	}
	if c := u.CompletionTokens; c != nil && *c >= 0 {
		rec.CompletionTokens = *c
	}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil && *d.CachedTokens >= 0 {
		rec.CachedTokens = *d.CachedTokens
	}
}

// lastUsageEvent finds the last SSE data line that mentions usage.
func lastUsageEvent(b []byte) []byte {
	lines := bytes.Split(b, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		l := bytes.TrimSpace(lines[i])
		if d, ok := bytes.CutPrefix(l, []byte("data:")); ok && bytes.Contains(d, []byte(`"usage"`)) {
			return bytes.TrimSpace(d)
		}
	}
	return nil
}

// lastUsageMember decodes the object after the last "usage": in the end
// of a JSON body too long to keep whole.
func lastUsageMember(b []byte) *usage {
	var u usage
	if !lastMember(b, "usage", &u) {
		return nil
	}
	return &u
}

// lastMember decodes into v the value after the last member named name
// in b, the end of a JSON body too long to keep whole, and reports
// whether it could. Inside a JSON string a quote is escaped, so the
// quoted name followed by a colon can only be a member name.
func lastMember(b []byte, name string, v any) bool {
	quoted := `"` + name + `"`
	i := bytes.LastIndex(b, []byte(quoted))
	if i < 0 {
		return false
	}
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(b[i+len(quoted):], " \t\r\n"), []byte(":"))
	if !ok {
		return false
	}
	return json.NewDecoder(bytes.NewReader(rest)).Decode(v) == nil
}

// isEventStream reports whether b, a body trimmed of spaces (whole, or
// its tail), is a server-sent event stream: it starts with a data or
// event field, or, cut, holds a data line.
func isEventStream(b []byte, whole bool) bool {
	return bytes.HasPrefix(b, []byte("data:")) || bytes.HasPrefix(b, []byte("event:")) ||
		!whole && bytes.Contains(b, []byte("\ndata:"))
}

// eachEvent calls f with the data of each event of the server-sent event
// stream b, in order: its data lines joined by newlines (the event's name
// is left to the data, whose type every API here repeats). Lines end in
// LF, CRLF or CR. A line cut at the start of a kept tail is no field and
// is skipped; a last event without its blank line is still given.
func eachEvent(b []byte, f func(data []byte)) {
	var data []byte
	has := false
	flush := func() {
		if has {
			f(data)
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
}
