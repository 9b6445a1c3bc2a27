package client

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// DefaultAnthropicVersion is the anthropic-version header sent to the
// Messages API when Config.AnthropicVersion is empty: the version every
// Messages API client has sent since the API's release, and the one the
// request built here is written to.
const DefaultAnthropicVersion = "2023-06-01"

// anthropicKeyHeader carries the key, as it is, to the Messages API.
const anthropicKeyHeader = "x-api-key"

// anthropicURL checks the anthropic settings and returns the request URL:
// Config.URL as given, the full Messages URL. A URL without a path is the
// base URL an SDK takes, which would fail every request with a 404.
func (cfg *Config) anthropicURL() (string, error) {
	if cfg.URL == "" {
		return "", valid.Errorf("URL", "is required for {API} %s", APIAnthropic)
	}
	u, err := checkURL("URL", cfg.URL)
	if err != nil {
		return "", err
	}
	if u.Path == "" || u.Path == "/" {
		return "", valid.Errorf("URL", "must be the full Messages URL, such as https://api.anthropic.com/v1/messages, not a base URL")
	}
	if cfg.Model == "" {
		return "", valid.Errorf("Model", "is required for {API} %s", APIAnthropic)
	}
	if cfg.AnthropicVersion == "" {
		cfg.AnthropicVersion = DefaultAnthropicVersion
	}
	if _, err := time.Parse(time.DateOnly, cfg.AnthropicVersion); err != nil {
		return "", valid.Errorf("AnthropicVersion", "must be an API version date such as %s", DefaultAnthropicVersion)
	}
	return u.String(), nil
}

// anthropicFrame frames a Messages API request:
//
//	{"model":M,"max_tokens":N,
//	 "system":[{"type":"text","text":PREFIX,"cache_control":{"type":"ephemeral"}}],
//	 "messages":[{"role":"user","content":TEXT}],"stream":true}
//
// system only with a shared prefix, stream only with Stream. The Messages
// API caches a prefix only up to a block marked with cache_control, so
// the shared prefix is marked: without the mark, a shared prefix would
// exercise no caching at all (cache_read_input_tokens would stay 0). The
// unique user message comes after the mark and is never cached.
func anthropicFrame(cfg *Config, system string) (before, after string) {
	before = `{"model":` + jsonString(cfg.Model) + `,"max_tokens":` + strconv.Itoa(cfg.MaxTokens) + `,`
	if system != "" {
		before += `"system":[{"type":"text","text":"` + system + `","cache_control":{"type":"ephemeral"}}],`
	}
	before += `"messages":[{"role":"user","content":"`
	after = `"}]`
	if cfg.Stream {
		after += `,"stream":true`
	}
	return before, after + `}`
}

// anthropicUsage is the usage block of a message, of a stream's
// message_start event (inside its message) or of its message_delta
// event, whose counts are cumulative and whose input counts may be absent.
type anthropicUsage struct {
	InputTokens              *int `json:"input_tokens"`
	CacheCreationInputTokens *int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     *int `json:"cache_read_input_tokens"`
	OutputTokens             *int `json:"output_tokens"`
}

// overlay takes every count u carries: a later event's cumulative count
// replaces an earlier one, an absent or null one leaves it.
func (a *anthropicUsage) overlay(u *anthropicUsage) {
	if u == nil {
		return
	}
	for _, f := range []struct{ to, from **int }{
		{&a.InputTokens, &u.InputTokens},
		{&a.CacheCreationInputTokens, &u.CacheCreationInputTokens},
		{&a.CacheReadInputTokens, &u.CacheReadInputTokens},
		{&a.OutputTokens, &u.OutputTokens},
	} {
		if *f.from != nil {
			*f.to = *f.from
		}
	}
}

// record fills rec in the results' terms, those of OpenAI's usage: the
// prompt is every input token, as the Messages API counts input_tokens
// after the last cache breakpoint only (its documented total is
// input_tokens + cache_creation_input_tokens + cache_read_input_tokens);
// the cached part is what was read from the cache; what was written to
// it was processed, and is in the prompt but not cached.
func (a *anthropicUsage) record(k *tokens) {
	if in, ok := count(a.InputTokens); ok {
		total := in
		for _, p := range []*int{a.CacheCreationInputTokens, a.CacheReadInputTokens} {
			if n, ok := count(p); ok {
				total += n
			}
		}
		k.prompt = total
	}
	if n, ok := count(a.CacheReadInputTokens); ok {
		k.cached = n
	}
	if n, ok := count(a.OutputTokens); ok {
		k.completion = n
	}
}

// maxCount bounds a token count taken from a response: far above any
// context window, far below an int's range, so that sums of counts a
// hostile target sends cannot overflow.
const maxCount = 1 << 40

// count returns *p when it is a count a response can hold.
func count(p *int) (int, bool) {
	if p == nil || *p < 0 || *p > maxCount {
		return 0, false
	}
	return *p, true
}

// parseAnthropicUsage reads a Messages API response's usage: from the
// message's usage member, or in a stream from the message_start event
// (the input counts, in the body's head) and the message_delta events
// (the cumulative output count and, in newer streams, the input counts
// again), from its tail.
func parseAnthropicUsage(b *bodyTail, rec *results.Record) {
	whole := b.n <= keptBodyBytes
	tail := bytes.TrimSpace(b.buf)
	if !isEventStream(tail, whole) {
		var u *anthropicUsage
		if whole {
			var m struct{ Usage *anthropicUsage }
			if len(tail) > 0 && tail[0] == '{' && json.Unmarshal(tail, &m) == nil {
				u = m.Usage
			}
		} else if !lastMember(tail, "usage", &u) {
			u = nil
		}
		k := noTokens()
		if u != nil {
			u.record(&k)
		}
		k.fill(rec)
		return
	}
	s := &anthropicStream{}
	if !whole {
		readEvents(b.head, s)
	}
	readEvents(tail, s)
	s.counted().fill(rec)
}

// anthropicStream is a Messages API stream's usage: the input counts of
// its message_start event overlaid by those its message_delta events
// carry (cumulative).
type anthropicStream struct {
	u     anthropicUsage
	found bool
}

func (s *anthropicStream) event(data []byte) bool {
	if !bytes.Contains(data, []byte("message_start")) && !bytes.Contains(data, []byte("message_delta")) {
		return anthropicContent(data)
	}
	var ev struct {
		Type    string
		Message struct{ Usage *anthropicUsage }
		Usage   *anthropicUsage
	}
	if json.Unmarshal(data, &ev) != nil {
		return false
	}
	switch ev.Type {
	case "message_start":
		s.u.overlay(ev.Message.Usage)
		s.found = true
	case "message_delta":
		s.u.overlay(ev.Usage)
		s.found = true
	case "content_block_delta":
		return true
	}
	return false
}

func (s *anthropicStream) cut(head, tail []byte) bool {
	if string(eventType(head)) == `"content_block_delta"` {
		return true
	}
	if !bytes.Contains(head, []byte("message_start")) && !bytes.Contains(head, []byte("message_delta")) {
		return false
	}
	var u *anthropicUsage
	if lastMember(tail, "usage", &u) && u != nil {
		s.u.overlay(u)
		s.found = true
	}
	return false
}

func (s *anthropicStream) counted() tokens {
	k := noTokens()
	if s.found {
		s.u.record(&k)
	}
	return k
}

// anthropicDialect is the Messages API.
type anthropicDialect struct{}

func (anthropicDialect) url(cfg *Config) (string, error) { return cfg.anthropicURL() }
func (anthropicDialect) frame(cfg *Config, system string) (before, after string) {
	return anthropicFrame(cfg, system)
}
func (anthropicDialect) line(cfg *Config, pl *promptLine) (pre, post []byte, err error) {
	return anthropicLine(cfg, pl)
}

// overhead: the Messages API counts with a tokenizer of its own, whose
// framing is not known.
func (anthropicDialect) overhead(int) int { return 0 }
func (anthropicDialect) ownCap() bool     { return true }
func (anthropicDialect) header(cfg *Config, h http.Header) {
	h.Set("anthropic-version", cfg.AnthropicVersion)
}
func (anthropicDialect) keys(string) []keyVar {
	return []keyVar{{envAnthropicKey, anthropicKeyHeader}}
}
func (anthropicDialect) stream() streamUsage                    { return &anthropicStream{} }
func (anthropicDialect) usage(b *bodyTail, rec *results.Record) { parseAnthropicUsage(b, rec) }

// headBytes: a stream's input counts are in its first event.
func (anthropicDialect) headBytes(stream bool) int {
	if stream {
		return keptHeadBytes
	}
	return 0
}
