package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/ptuprobe/ptuprobe/internal/jsonscan"
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
	pooled  *[]byte // where buf came from, when from bodyPool
}

// minRead is the least room readFrom reads into: a stream's events are
// a few hundred bytes, and the storage doubles as a body grows.
const minRead = 512

// tailRead is the room past keptBodyBytes once the tail is full: a body
// longer than the tail is read in pieces of up to 8 KiB (512 bytes at a
// time made an endless 1 MiB body two thousand reads).
const tailRead = 8 << 10

// readFrom reads r to its end into b's own storage, with no copy buffer
// between: an open stream then holds only what it keeps (its tail so far),
// where a pooled 8 KiB buffer held for the whole of each stream was a
// third of the client's live heap at a thousand streams open. The storage
// grows to keptBodyBytes+tailRead at most; past keptBodyBytes the oldest
// bytes are dropped before a read, and the end trims to the last
// keptBodyBytes, so the tail is the one Write keeps.
func (b *bodyTail) readFrom(r io.Reader) (int64, error) {
	var total int64
	defer b.trim()
	for {
		b.room()
		n, err := r.Read(b.buf[len(b.buf):cap(b.buf)])
		if n > 0 {
			got := b.buf[len(b.buf) : len(b.buf)+n]
			if room := b.headCap - len(b.head); room > 0 {
				b.head = append(b.head, got[:min(room, n)]...)
			}
			b.buf = b.buf[:len(b.buf)+n]
			b.n += int64(n)
			total += int64(n)
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
}

// room makes at least minRead bytes of room after b.buf: by doubling
// while the tail is short, by dropping its oldest bytes past
// keptBodyBytes (which leaves tailRead of room) once it is full.
func (b *bodyTail) room() {
	if cap(b.buf)-len(b.buf) >= minRead {
		return
	}
	if len(b.buf) > keptBodyBytes {
		b.trim()
		return
	}
	size := min(max(2*cap(b.buf), len(b.buf)+minRead, 2*minRead), keptBodyBytes+tailRead)
	grown := make([]byte, len(b.buf), size)
	copy(grown, b.buf)
	b.buf = grown
}

// trim leaves the last keptBodyBytes in b.buf.
func (b *bodyTail) trim() {
	if over := len(b.buf) - keptBodyBytes; over > 0 {
		b.buf = b.buf[:copy(b.buf, b.buf[over:])]
	}
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

// responseBody is a response body as it is read: a streamed answer's as its
// events come (stream), any other into its kept tail.
type responseBody struct {
	stream *streamBody
	tail   *bodyTail
}

// readFrom reads body, bounded by MaxBodyBytes (past it, one byte more).
func (a *responseBody) readFrom(body io.Reader) error {
	if a.stream == nil {
		_, err := a.tail.readFrom(io.LimitReader(body, MaxBodyBytes+1))
		return err
	}
	return a.stream.readFrom(body) // bounded by the stream itself
}

// n is how many bytes of the body were read.
func (a *responseBody) n() int64 {
	if a.stream != nil {
		return a.stream.n
	}
	return a.tail.n
}

// whole is the body read whole and kept whole, when it was (ok: read to
// its end), for the advice a body holds (Gemini's RetryInfo): a part of
// a document is no document, and the events of a stream are not kept.
func (a *responseBody) whole(ok bool) []byte {
	tail := a.tail
	if a.stream != nil {
		tail = a.stream.tail
	}
	if !ok || tail == nil || tail.n > keptBodyBytes {
		return nil
	}
	return tail.buf
}

// parseUsage fills rec's token counts from a successful answer.
func (a *responseBody) parseUsage(t *Target, rec *results.Record) {
	switch {
	case a.stream != nil && a.stream.events != nil:
		a.stream.usage.counted().fill(rec)
	case a.stream != nil:
		t.parseUsage(a.stream.tail, rec)
	default:
		t.parseUsage(a.tail, rec)
	}
}

// pooledBodyBytes bounds the storage of an answer read at once that goes
// back to bodyPool for the next: a refusal's or a completion's JSON, a
// few hundred bytes, taken from the pool is no allocation (it was a
// seventh of what a request allocated at 5,000/s, 60% of them 429s).
const pooledBodyBytes = 16 << 10

// bodyPool holds storage for bodyTail.buf.
var bodyPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 2*minRead)
	return &b
}}

// fromPool gives b empty storage from bodyPool, for release to give back.
func (b *bodyTail) fromPool() {
	b.pooled = bodyPool.Get().(*[]byte)
	b.buf = (*b.pooled)[:0]
}

// release gives b's storage back to bodyPool, when it is small enough:
// nothing of it is used after (the usage and the advice read from it
// are numbers).
func (b *bodyTail) release() {
	if b.pooled != nil && cap(b.buf) <= pooledBodyBytes {
		*b.pooled = b.buf[:0]
		bodyPool.Put(b.pooled)
	}
	b.buf, b.pooled = nil, nil
}

// newBody is what a response body is read into: its tail, and for an
// Anthropic stream its head too.
func (t *Target) newBody() bodyTail {
	return bodyTail{headCap: dialectOf(t.cfg.API).headBytes(t.cfg.Stream)}
}

// parseUsage fills rec's token counts from a successful response body, in
// the dialect of the target's API (raw targets are read as OpenAI's).
func (t *Target) parseUsage(b *bodyTail, rec *results.Record) {
	dialectOf(t.cfg.API).usage(b, rec)
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
	var c counts
	switch {
	case isEventStream(b, whole):
		s := &chatStream{}
		readEvents(b, s)
		c = s.c
	case whole:
		if len(b) > 0 && b[0] == '{' {
			c = usageOf(b)
		}
	default:
		c = lastUsageMember(b).counts()
	}
	k := noTokens()
	c.record(&k)
	k.fill(rec)
}

// chatStream is a chat completion stream's usage (OpenAI's, Azure's, a
// raw target's): that of its last event that names usage (with
// stream_options.include_usage every chunk carries "usage":null, and the
// last one the counts). Its content events are chatContent's.
type chatStream struct{ c counts }

func (s *chatStream) event(data []byte) bool {
	if !bytes.Contains(data, []byte(`"usage"`)) {
		return chatContent(data)
	}
	s.c = counts{}
	if len(data) == 0 || data[0] != '{' {
		return false
	}
	// The usual chunk in one pass; the rest as usageOf reads them.
	var content bool
	if _, err := scanChunk(data, &s.c, &content); err == nil {
		return content
	}
	s.c = usageOf(data)
	return chatContent(data)
}

func (s *chatStream) cut(head, tail []byte) bool {
	if bytes.Contains(tail, []byte(`"usage"`)) {
		s.c = lastUsageMember(tail).counts()
	}
	return chatCutContent(head)
}

func (s *chatStream) counted() tokens {
	k := noTokens()
	s.c.record(&k)
	return k
}

// usageOf is the usage of the JSON document doc as json.Unmarshal into a
// usageBody reads it: nothing set when doc is no JSON, has no usage or one
// of another form. The usual document is read in place (scanUsage, some
// five times cheaper); encoding/json reads the rest.
func usageOf(doc []byte) counts {
	var c counts
	if _, err := scanUsage(doc, &c); err == nil {
		return c
	}
	var ub usageBody
	if json.Unmarshal(doc, &ub) != nil {
		return counts{}
	}
	return ub.Usage.counts()
}

// counts is a usage block's counts and whether each was given (a null or
// an absent count is not).
type counts struct {
	prompt, completion, cached int
	set                        [3]bool // prompt, completion, cached
}

// record fills k with the counts given that a row can hold.
func (c counts) record(k *tokens) {
	if c.set[0] && c.prompt >= 0 {
		k.prompt = c.prompt
	}
	if c.set[1] && c.completion >= 0 {
		k.completion = c.completion
	}
	if c.set[2] && c.cached >= 0 {
		k.cached = c.cached
	}
}

// tokens is a row's token counts, in the results' terms (OpenAI's):
// results.None where the answer gave none.
type tokens struct{ prompt, cached, completion int }

func noTokens() tokens { return tokens{results.None, results.None, results.None} }

// fill sets rec's counts that k has.
func (k tokens) fill(rec *results.Record) {
	if k.prompt != results.None {
		rec.PromptTokens = k.prompt
	}
	if k.cached != results.None {
		rec.CachedTokens = k.cached
	}
	if k.completion != results.None {
		rec.CompletionTokens = k.completion
	}
}

// counts is u's counts; a nil u has none.
func (u *usage) counts() counts {
	var c counts
	if u == nil {
		return c
	}
	if u.PromptTokens != nil {
		c.prompt, c.set[0] = *u.PromptTokens, true
	}
	if u.CompletionTokens != nil {
		c.completion, c.set[1] = *u.CompletionTokens, true
	}
	if d := u.PromptTokensDetails; d != nil && d.CachedTokens != nil {
		c.cached, c.set[2] = *d.CachedTokens, true
	}
	return c
}

// errUnusual is scanUsage's answer to a document it leaves to
// encoding/json.
var errUnusual = errors.New("not the usual form")

// scanUsage reads the usage of doc into c, reporting whether doc has a
// (non-null) usage object, when it can tell alone what json.Unmarshal
// would: doc is an object whose keys are ASCII without escapes, none
// repeated among those read nor matching one of them but for case, and
// whose counts are integers (or null) within ±2^53. Anything else
// (malformed JSON included) is errUnusual, and left to encoding/json,
// whose case-insensitive keys, last-wins repeats and type errors it does
// not mimic. FuzzUsageScan holds the two together.
func scanUsage(doc []byte, c *counts) (found bool, err error) {
	return scanChunk(doc, c, nil)
}

// scanChunk is scanUsage, and with content set it reads in the same pass
// whether the document is a chat chunk with content (chatContent's rule):
// a stream's every chunk names its usage ("usage":null but the last), and
// one pass over it costs half of two.
func scanChunk(doc []byte, c *counts, content *bool) (found bool, err error) {
	s := jsonscan.New(doc)
	names := []string{"usage", "choices"}
	if content == nil {
		names = names[:1]
	}
	err = members(&s, func(i int) error {
		if i == 1 {
			ok, err := choicesContent(&s)
			*content = ok
			return err
		}
		if s.Null() {
			return nil
		}
		found = true
		return members(&s, func(i int) error {
			switch i {
			case 0:
				return scanCount(&s, &c.prompt, &c.set[0])
			case 1:
				return scanCount(&s, &c.completion, &c.set[1])
			}
			if s.Null() {
				return nil
			}
			return members(&s, func(int) error { return scanCount(&s, &c.cached, &c.set[2]) }, "cached_tokens")
		}, "prompt_tokens", "completion_tokens", "prompt_tokens_details")
	}, names...)
	if err != nil || !s.End() {
		return false, errUnusual
	}
	return found, nil
}

// members walks the object at s, calling read with the index in names of
// each member so named, at its value (once each: a repeat is encoding/json's
// to read, errUnusual), and skipping the others.
func members(s *jsonscan.Scanner, read func(i int) error, names ...string) error {
	if s.Peek() != '{' {
		return errUnusual
	}
	var seen uint
	return s.Object(func(key []byte) error {
		i, err := matchKey(key, names...)
		switch {
		case err != nil:
			return err
		case i < 0:
			return s.Skip()
		case seen&(1<<i) != 0:
			return errUnusual
		}
		seen |= 1 << i
		return read(i)
	})
}

// matchKey is the index of the name key (raw, escapes kept) is, or -1; a
// key encoding/json could match to one of names otherwise (escaped, not
// ASCII, in another case) is errUnusual.
func matchKey(key []byte, names ...string) (int, error) {
	for i, n := range names {
		if string(key) == n {
			return i, nil
		}
	}
	for _, c := range key {
		if c == '\\' || c >= 0x80 {
			return -1, errUnusual
		}
	}
	for _, n := range names {
		if len(key) == len(n) && bytes.EqualFold(key, []byte(n)) {
			return -1, errUnusual
		}
	}
	return -1, nil
}

// scanCount reads an integer or null into *v, *set reporting which.
func scanCount(s *jsonscan.Scanner, v *int, set *bool) error {
	n, ok, err := s.OptInt()
	if err != nil || n > 1<<53 || n < -(1<<53) {
		return errUnusual
	}
	*v, *set = int(n), ok
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

// dataField is the name of the one field of an event stream read.
const dataField = "data:"
