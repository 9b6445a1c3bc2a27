package sim

import (
	"math"
	"strconv"
	"time"
)

// Sources of advice: the field of a 429 that carried an advised wait, as
// Advice.Source and Stats.Advised name it. Each is written in its own
// unit and rounded up in it (see the package doc).
const (
	SourceRetryAfterMS           = "retry-after-ms"                     // azure: whole ms
	SourceRetryAfter             = "retry-after"                        // whole seconds
	SourceResetRequests          = "x-ratelimit-reset-requests"         // openai: a duration, whole ms
	SourceResetTokens            = "x-ratelimit-reset-tokens"           // openai: a duration, whole ms
	SourceAnthropicRequestsReset = "anthropic-ratelimit-requests-reset" // an RFC 3339 time, whole seconds
	SourceAnthropicTokensReset   = "anthropic-ratelimit-tokens-reset"   // an RFC 3339 time, whole seconds
	SourceRateLimit              = "ratelimit"                          // ietf RateLimit t: whole seconds
	SourceRateLimitReset         = "ratelimit-reset"                    // ietf RateLimit-Reset (older drafts): whole seconds
	SourceRetryInfo              = "retry-info"                         // gemini body RetryInfo.retryDelay: whole ms
)

// adviceSource numbers the sources, so the summary is an array and an
// entry of the record one byte.
type adviceSource uint8

const (
	srcRetryAfterMS adviceSource = iota
	srcRetryAfter
	srcResetRequests
	srcResetTokens
	srcAnthropicRequestsReset
	srcAnthropicTokensReset
	srcRateLimit
	srcRateLimitReset
	srcRetryInfo
	numSources
)

var sourceNames = [numSources]string{
	SourceRetryAfterMS, SourceRetryAfter, SourceResetRequests, SourceResetTokens,
	SourceAnthropicRequestsReset, SourceAnthropicTokensReset, SourceRateLimit,
	SourceRateLimitReset, SourceRetryInfo,
}

func (s adviceSource) String() string { return sourceNames[s] }

// MaxAdvice bounds the record of advised waits (Server.Advised): the last
// MaxAdvice entries are kept and older ones forgotten, counted in
// Stats.AdviceEvicted. The summary in Stats counts every one. Full, the
// record holds about 3 MB.
const MaxAdvice = 1 << 16

// Advice is one advised wait as the simulator wrote it: which refusal
// wrote it, in which field, and the wait that field says in wall-clock
// milliseconds. A refusal writes one Advice per field that advises a wait
// (azure: retry-after-ms and retry-after), all from the same model wait,
// each rounded up in its own unit. Faults write none: they advise nothing
// the model stands behind.
type Advice struct {
	// Refusal numbers the refusals that advised a wait, from 1, in the
	// order the model decided them; a refusal's fields share it.
	Refusal uint64
	// Key is the refused caller as Stats names it ("key-0"…), or "" for
	// a key past MaxKeys.
	Key     string
	Dialect string
	// Source is the field: one of the Source… constants.
	Source string
	// WallMS is the wait as written, in wall-clock milliseconds: a field
	// in seconds gives whole thousands; an absolute time (anthropic's
	// resets) gives that time minus At, rounded up to the millisecond.
	WallMS int64
	// At is the wall clock the refusal was written against: what an
	// absolute time is relative to.
	At time.Time
}

// AdviceStats summarizes the waits one source advised, in wall ms.
type AdviceStats struct {
	Source string `json:"source"`
	Count  uint64 `json:"count"`
	MinMS  int64  `json:"min_ms"`
	MaxMS  int64  `json:"max_ms"`
	SumMS  int64  `json:"sum_ms"`
}

// adviceEntry is one Advice in the record, 48 bytes.
type adviceEntry struct {
	refusal uint64
	wallMS  int64
	at      time.Time
	key     int32 // the key's index from 1; 0 for a key past MaxKeys
	source  adviceSource
}

// adviceLog is the bounded record of advised waits: a ring of the last
// max entries, and a summary per source of every entry ever written.
type adviceLog struct {
	max      int
	ring     []adviceEntry
	next     int // the oldest slot once the ring is full
	evicted  uint64
	refusals uint64
	summary  [numSources]AdviceStats
}

// record appends the advice of one refusal. Called with s.mu held.
func (l *adviceLog) record(a *answer, key int32) {
	if a.nAdvice == 0 {
		return
	}
	l.refusals++
	for _, ad := range a.advice[:a.nAdvice] {
		e := adviceEntry{refusal: l.refusals, wallMS: ad.wallMS, at: a.wall, key: key, source: ad.source}
		if len(l.ring) < l.max {
			if len(l.ring) == cap(l.ring) { // grow by doubling, never past max
				l.ring = append(make([]adviceEntry, 0, min(l.max, 2*len(l.ring)+64)), l.ring...)
			}
			l.ring = append(l.ring, e)
		} else {
			l.ring[l.next] = e
			l.next = (l.next + 1) % l.max
			l.evicted++
		}
		st := &l.summary[ad.source]
		if st.Count == 0 || ad.wallMS < st.MinMS {
			st.MinMS = ad.wallMS
		}
		st.MaxMS = max(st.MaxMS, ad.wallMS)
		st.SumMS += ad.wallMS
		st.Count++
	}
}

// Advised returns the advised waits the simulator wrote, oldest first: the
// last MaxAdvice of them. A test that drives a client against the
// simulator compares what the client recorded with these.
func (s *Server) Advised() []Advice {
	s.mu.Lock()
	defer s.mu.Unlock()
	l := &s.advice
	out := make([]Advice, 0, len(l.ring))
	for i := range l.ring {
		e := l.ring[(l.next+i)%len(l.ring)]
		a := Advice{Refusal: e.refusal, Dialect: s.cfg.Dialect, Source: e.source.String(), WallMS: e.wallMS, At: e.at}
		if e.key > 0 {
			a.Key = "key-" + strconv.Itoa(int(e.key)-1)
		}
		out = append(out, a)
	}
	return out
}

// adviceStats is the summary for Stats: the sources that advised anything.
// Called with s.mu held.
func (l *adviceLog) stats() []AdviceStats {
	var out []AdviceStats
	for i, st := range l.summary {
		if st.Count > 0 {
			st.Source = adviceSource(i).String()
			out = append(out, st)
		}
	}
	return out
}

// limitView is one limit as an answer writes it: its reset rounded up once
// to whole wall milliseconds, and every coarser form derived from that.
type limitView struct {
	quota
	resetMS int64     // wall ms, rounded up
	resetAt time.Time // wall instant of the reset, rounded up to the second
	windowS int64     // the policy window in wall seconds, rounded up, at least 1
}

// resetS is the reset in whole wall seconds, rounded up.
func (v limitView) resetS() int64 { return (v.resetMS + 999) / 1000 }

// advised is one field of a refusal that advises a wait.
type advised struct {
	source adviceSource
	wallMS int64
}

// answer is everything an answer writes about the limits and, refused,
// about the wait. It is computed once, under the lock, at the decision,
// so the witness, the record of advised waits and the writer read the
// very same numbers: what the record says was written, was.
type answer struct {
	wall              time.Time // the wall clock it is written against
	requests, tokens  limitView
	outputWeight      float64
	refused           bool
	waitMS            int64 // refused: the model's wait in wall ms, rounded up, at least 1
	refusedByRequests bool  // the binding exhausted limit is the requests one
	advice            [3]advised
	nAdvice           int
	retryAfter        bool // write retry-after (whole seconds of waitMS)
	retryAfterMS      bool // write retry-after-ms
}

// retryAfterS is retry-after's value: the wait in whole seconds, rounded up.
func (a *answer) retryAfterS() int64 { return (a.waitMS + 999) / 1000 }

func (a *answer) add(src adviceSource, wallMS int64) {
	a.advice[a.nAdvice] = advised{src, wallMS}
	a.nAdvice++
}

// soonest is the shortest wait the answer advises in wall ms, 0 for none:
// a client that honours any one field it wrote is on time, since each
// field is the same wait rounded up.
func (a *answer) soonest() int64 {
	var ms int64
	for _, ad := range a.advice[:a.nAdvice] {
		if ms == 0 || ad.wallMS < ms {
			ms = ad.wallMS
		}
	}
	return ms
}

// binding is the limit an ietf answer names as "default", and whether it
// is the token limit: on a refusal, the exhausted limit that resets last
// (what the client must wait for); otherwise the one with the least left
// for its size.
func (a *answer) binding() (limitView, bool) {
	r, t := a.requests, a.tokens
	switch {
	case !r.set:
		return t, true
	case !t.set:
		return r, false
	case a.refused:
		if a.refusedByRequests {
			return r, false
		}
		return t, true
	case float64(r.remaining)/float64(r.limit) < float64(t.remaining)/float64(t.limit):
		return r, false
	}
	return t, true
}

// ceilWallMS converts a model-time span to whole wall milliseconds,
// rounded up (0 stays 0). The epsilon keeps a float error of the
// conversion from adding a millisecond to an exact value.
func (s *Server) ceilWallMS(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := float64(d) / float64(time.Millisecond) / s.cfg.TimeScale
	return max(0, int64(math.Ceil(ms-1e-9)))
}

func (s *Server) viewOf(q quota, wall time.Time) limitView {
	v := limitView{quota: q}
	if !q.set {
		return v
	}
	v.resetMS = s.ceilWallMS(q.reset)
	v.resetAt = ceilSecond(wall.Add(time.Duration(v.resetMS) * time.Millisecond))
	v.windowS = max(1, (s.ceilWallMS(q.window)+999)/1000)
	return v
}

// ceilSecond rounds t up to a whole second.
func ceilSecond(t time.Time) time.Time {
	if u := t.Truncate(time.Second); u.Before(t) {
		return u.Add(time.Second)
	}
	return t
}

// ceilMS is d in whole milliseconds, rounded up.
func ceilMS(d time.Duration) int64 {
	return int64((d + time.Millisecond - 1) / time.Millisecond)
}

// answerOf fixes what an answer with limits l writes, at the model's
// decision; refused answers advise the model's wait (model time), each
// field in the dialect's unit. Called with s.mu held.
func (s *Server) answerOf(l limits, refused bool, wait time.Duration) answer {
	a := answer{
		wall:         s.wall(),
		outputWeight: l.outputWeight,
		refused:      refused,
	}
	a.requests, a.tokens = s.viewOf(l.requests, a.wall), s.viewOf(l.tokens, a.wall)
	if !refused {
		return a
	}
	a.waitMS = s.wallMS(wait)
	// The exhausted limit that resets last is what a client reading the
	// limits must wait for.
	r, t := a.requests, a.tokens
	a.refusedByRequests = r.set && r.remaining == 0 && (!t.set || t.remaining != 0 || r.resetMS > t.resetMS)
	exhausted := t
	if a.refusedByRequests {
		exhausted = r
	}
	retry := !s.cfg.OmitRetryHeaders
	switch s.cfg.Dialect {
	case DialectAzure:
		if s.style.gateway {
			a.retryAfter = retry && s.cfg.GatewayRetryAfter
		} else {
			a.retryAfterMS, a.retryAfter = retry, retry
		}
		if a.retryAfterMS {
			a.add(srcRetryAfterMS, a.waitMS)
		}
	case DialectOpenAI:
		a.retryAfter = retry
		if exhausted.set && exhausted.remaining == 0 {
			src := srcResetTokens
			if a.refusedByRequests {
				src = srcResetRequests
			}
			a.add(src, exhausted.resetMS)
		}
	case DialectAnthropic:
		a.retryAfter = retry
		if exhausted.set && exhausted.remaining == 0 {
			src := srcAnthropicTokensReset
			if a.refusedByRequests {
				src = srcAnthropicRequestsReset
			}
			a.add(src, ceilMS(exhausted.resetAt.Sub(a.wall)))
		}
	case DialectIETF:
		a.retryAfter = s.cfg.IETFRetryAfter
		if b, _ := a.binding(); b.set {
			src := srcRateLimit
			if s.cfg.IETFLegacy {
				src = srcRateLimitReset
			}
			a.add(src, 1000*b.resetS())
		}
	case DialectGemini:
		a.add(srcRetryInfo, a.waitMS)
	}
	if a.retryAfter {
		a.add(srcRetryAfter, 1000*a.retryAfterS())
	}
	return a
}
