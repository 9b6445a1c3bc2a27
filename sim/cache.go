package sim

import "time"

// Prompt caching as documented for Azure OpenAI: a prompt prefix of at
// least 1,024 tokens seen recently is served from cache, reported in
// 128-token steps. The simulator caches only the leading system message
// (the common case: a long shared instruction block).
const (
	cacheMinTokens = 1024
	cacheStep      = 128
	cacheTTL       = 5 * time.Minute
	cacheMaxSize   = 4096 // digests kept; bounded so memory stays flat
)

// promptCache remembers when each long system message was last served.
type promptCache struct {
	seen map[[32]byte]time.Time
}

// cachedTokens is what a request reports as cached at now: the system
// message's tokens rounded down to 128-token steps when it was seen in
// the last five minutes, else 0.
func (c *promptCache) cachedTokens(now time.Time, r *request) int {
	if r.SystemTokens < cacheMinTokens || c.seen == nil {
		return 0
	}
	last, ok := c.seen[r.SystemDigest]
	if !ok || now.Sub(last) > cacheTTL {
		return 0
	}
	return min(r.PromptTokens, r.SystemTokens/cacheStep*cacheStep)
}

// remember records that r's system message was served at now. A hit
// refreshes the entry, as a used cache entry stays warm.
func (c *promptCache) remember(now time.Time, r *request) {
	if r.SystemTokens < cacheMinTokens {
		return
	}
	if c.seen == nil {
		c.seen = make(map[[32]byte]time.Time)
	}
	if _, ok := c.seen[r.SystemDigest]; !ok && len(c.seen) >= cacheMaxSize {
		c.evict(now)
	}
	c.seen[r.SystemDigest] = now
}

// evict drops expired entries, and if none had expired, one arbitrary
// entry, so the map never passes cacheMaxSize.
func (c *promptCache) evict(now time.Time) {
	dropped := false
	for k, t := range c.seen {
		if now.Sub(t) > cacheTTL {
			delete(c.seen, k)
			dropped = true
		}
	}
	if dropped {
		return
	}
	for k := range c.seen {
		delete(c.seen, k)
		return
	}
}
