package client

import (
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// streamTiming is the token-level timing of one streamed answer: when its
// content events came (the events its dialect's stream reader calls
// content: a token, never a role-only, keep-alive or prompt-filter
// event), read as they come. It is fixed-size whatever the answer's
// length — the first and last content times, a count, and the gaps
// between content events in a bounded histogram (gapHist) — so timing a
// stream costs no memory per token. The histogram is taken from gapPool
// at an answer's second content event and given back when its row is
// filled: an answer makes no garbage of it (1.5 KB an answer was 1.5 MB
// a second at 1,000 streams a second).
type streamTiming struct {
	// readAt is when the read that brought the bytes being scanned
	// returned: an event is timed by the read that completed it. Zero
	// until asked for in a read (stamp), so a read with no content event
	// costs no clock reading.
	readAt      time.Time
	first, last time.Time
	n           int      // content events
	gaps        *gapHist // from gapPool, from the second content event
}

// gapPool holds the gap histograms of answers read.
var gapPool = sync.Pool{New: func() any { return new(gapHist) }}

// newRead marks the start of the scan of a new read's bytes.
func (s *streamTiming) newRead() { s.readAt = time.Time{} }

// content notes a content event, completed by the read being scanned.
func (s *streamTiming) content() {
	if s.readAt.IsZero() {
		s.readAt = time.Now()
	}
	at := s.readAt
	switch {
	case s.n == 0:
		s.first = at
	case s.gaps == nil:
		s.gaps = gapPool.Get().(*gapHist)
		fallthrough
	default:
		s.gaps.add(at.Sub(s.last))
	}
	s.last = at
	s.n++
}

// fill sets rec's token-level timings from the stream's content events,
// each in ms from start, the attempt's send: ttft_ms; itl_p50_ms and
// itl_max_ms with two content events or more; tpot_ms, (latency_ms −
// ttft_ms) / (output tokens − 1), when the answer was read whole (rec's
// error empty) and has two output tokens or more, counted by its usage
// (completion_tokens, already in rec) or else by its content events. A
// usage below the content events counts them instead: every content event
// carries a token at least, and a usage so low is a placeholder (the
// Messages API's message_start says output_tokens 1, and a stream cut
// before its message_delta keeps it).
// The gap histogram goes back to gapPool.
func (s *streamTiming) fill(start time.Time, rec *results.Record) {
	if s.n == 0 {
		return
	}
	rec.TTFTMS = ms(s.first.Sub(start))
	if h := s.gaps; h != nil {
		rec.ITLP50MS = ms(h.median())
		rec.ITLMaxMS = ms(h.max)
		*h = gapHist{}
		gapPool.Put(h)
		s.gaps = nil
	}
	out := s.n
	if rec.CompletionTokens != results.None {
		out = max(out, rec.CompletionTokens)
	}
	if rec.Error == "" && out > 1 && rec.LatencyMS != results.None {
		rec.TPOTMS = max(rec.LatencyMS-rec.TTFTMS, 0) / float64(out-1)
	}
}

// Bounds of gapHist: 1 ms buckets below fineGaps ms, coarseWidth-wide
// ones for coarseGaps more, and beyond them one bucket.
const (
	fineGaps    = 512
	coarseGaps  = 256
	coarseWidth = 16 * time.Millisecond
	fineTop     = fineGaps * time.Millisecond
	coarseTop   = fineTop + coarseGaps*coarseWidth // 4.608 s
	maxBucket   = 1<<16 - 1
)

// gapHist holds the gaps between an answer's content events in 1.5 KB:
// a bucket a millisecond below 512 ms (an inter-token gap is tens of
// ms), 16 ms wide to 4.608 s, then one bucket; and the exact least and
// largest gaps. Its median is a bucket's middle clamped to them: within
// 0.5 ms of the exact median below 512 ms, within 8 ms below 4.608 s,
// and beyond, between 4.608 s and the largest gap. A bucket that would
// pass 65,535 halves them all (an answer of so many events passes
// MaxBodyBytes first: 1 MiB is 65,536 events of 16 bytes).
type gapHist struct {
	fine     [fineGaps]uint16
	coarse   [coarseGaps]uint16
	over     uint32
	n        int // gaps added (as counted, after any halving)
	min, max time.Duration
}

func (h *gapHist) add(d time.Duration) {
	d = max(d, 0)
	if h.n == 0 || d < h.min {
		h.min = d
	}
	h.max = max(h.max, d)
	switch {
	case d < fineTop:
		h.bump(&h.fine[d/time.Millisecond])
	case d < coarseTop:
		h.bump(&h.coarse[(d-fineTop)/coarseWidth])
	default:
		h.over++
		h.n++
	}
}

// bump adds one to bucket b, halving every bucket first when it is full.
func (h *gapHist) bump(b *uint16) {
	if *b == maxBucket {
		h.n = int(h.over)
		for i := range h.fine {
			h.fine[i] /= 2
			h.n += int(h.fine[i])
		}
		for i := range h.coarse {
			h.coarse[i] /= 2
			h.n += int(h.coarse[i])
		}
	}
	*b++
	h.n++
}

// median is the gaps' median: the middle one's value, or the mean of
// the two middle ones' with an even count, each its bucket's middle
// clamped to the least and largest gap.
func (h *gapHist) median() time.Duration {
	lo, hi := h.at((h.n-1)/2), h.at(h.n/2)
	return (lo + hi) / 2
}

// at is the value of the gap of rank k (from 0) in ascending order.
func (h *gapHist) at(k int) time.Duration {
	seen := 0
	for i, c := range h.fine {
		if seen += int(c); seen > k {
			v := time.Duration(i)*time.Millisecond + time.Millisecond/2
			return min(max(v, h.min), h.max)
		}
	}
	for i, c := range h.coarse {
		if seen += int(c); seen > k {
			v := fineTop + time.Duration(i)*coarseWidth + coarseWidth/2
			return min(max(v, h.min), h.max)
		}
	}
	return min(max((coarseTop+h.max)/2, h.min), h.max)
}
