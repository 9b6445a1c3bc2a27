package client

import (
	"bytes"
	"encoding/json"

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

// bodyTail is an io.Writer that counts what it is given and keeps the
// last keptBodyBytes of it.
type bodyTail struct {
	buf []byte
	n   int64
}

func (b *bodyTail) Write(p []byte) (int, error) {
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
// of a JSON body too long to keep whole. Inside a JSON string a quote is
// escaped, so "usage" followed by a colon can only be a member name.
func lastUsageMember(b []byte) *usage {
	i := bytes.LastIndex(b, []byte(`"usage"`))
	if i < 0 {
		return nil
	}
	rest, ok := bytes.CutPrefix(bytes.TrimLeft(b[i+len(`"usage"`):], " \t\r\n"), []byte(":"))
	if !ok {
		return nil
	}
	var u usage
	if json.NewDecoder(bytes.NewReader(rest)).Decode(&u) != nil {
		return nil
	}
	return &u
}
