package sim

import (
	"bytes"
	"sync"
)

// parsedBodies remembers the parse of recent request bodies: a client
// that retries sends its body again, byte for byte, and a retry storm is
// most of what a refusing deployment reads (the policy lab's persistent
// retriers send fifteen attempts a request at 3x). A hit costs a compare
// of the body instead of a scan of it; the body's hash is the one the
// witness needs anyway. Direct-mapped: a slot per hash, the last body to
// land there kept, so memory stays bounded (maxParsedBytes of bodies).
// The slots come in chunks, each allocated when a body first lands in it:
// a fit makes a simulator for every point it tries (some 1,900 for a run
// of 5 sends) and parses a few bodies in each, and zeroing the 160 KiB of
// a whole table per simulator was 80% of such a replay's CPU.
type parsedBodies struct {
	mu     sync.Mutex
	held   int // the bytes the slots' bodies hold
	chunks [parsedSlots / parsedChunk]*[parsedChunk]parsedBody
}

// parsedChunk is how many slots are allocated at once.
const parsedChunk = 16

// slot is the slot of sum, its chunk allocated if it was not; c.mu held.
func (c *parsedBodies) slot(sum uint64) *parsedBody {
	i := sum % parsedSlots
	ch := c.chunks[i/parsedChunk]
	if ch == nil {
		ch = new([parsedChunk]parsedBody)
		c.chunks[i/parsedChunk] = ch
	}
	return &ch[i%parsedChunk]
}

// parsedSlots, maxParsedBody and maxParsedBytes bound the cache: 1,024
// bodies of at most 16 KiB (a prompt of some 4,000 tokens), 4 MiB of them
// at most. A lab run at 3x has over a thousand requests retrying at once:
// 256 slots (before 2026-12-06) reparsed one retry in nine of a persistent
// retrier's (4,987 parses for its 1,809 requests, 27,819 attempts; 2,568
// with 1,024 slots).
const (
	parsedSlots    = 1024
	maxParsedBody  = 16 << 10
	maxParsedBytes = 4 << 20
)

type parsedBody struct {
	sum     uint64
	kind    bodyKind
	max     int
	counted bool   // counted with the server's tokenizer
	body    []byte // nil: empty
	req     request
}

// parse is parseCounted(body, kind, defaultMax, tc), from the cache when
// the same body was parsed the same way last in its slot; sum is the
// body's hash. Only a body that parses is kept.
func (c *parsedBodies) parse(body []byte, sum uint64, kind bodyKind, defaultMax int, tc *tokenMemo) (request, error) {
	counted := tc != nil
	c.mu.Lock()
	e := c.slot(sum)
	if e.body != nil && e.sum == sum && e.kind == kind && e.max == defaultMax && e.counted == counted && bytes.Equal(e.body, body) {
		req := e.req
		c.mu.Unlock()
		return req, nil
	}
	c.mu.Unlock()
	req, err := parseCounted(body, kind, defaultMax, tc)
	if err != nil || len(body) > maxParsedBody {
		return req, err
	}
	c.mu.Lock()
	if had := cap(e.body); len(body) <= had || c.held-had+len(body) <= maxParsedBytes {
		e.sum, e.kind, e.max, e.counted, e.req = sum, kind, defaultMax, counted, req
		e.body = append(e.body[:0], body...)
		c.held += cap(e.body) - had
	}
	c.mu.Unlock()
	return req, nil
}
