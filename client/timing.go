package client

import (
	"slices"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// streamTiming is the token-level timing of one streamed answer: when its
// content events came (the events its dialect's stream reader calls
// content: a token, never a role-only, keep-alive or prompt-filter
// event), read as they come. It is fixed-size whatever the answer's
// length — the first and last content times, a count, and the gaps
// between content events bucketed as gapHist buckets them — so timing a
// stream costs no memory per token. The first fewGaps gaps are kept in
// the timing itself, each as its bucket (few); an answer with more takes
// a gapHist from gapPool at its next gap, the few moved into it, and
// gives it back when its row is filled. An answer makes no garbage of
// its timing (1.5 KB an answer was 1.5 MB a second at 1,000 streams a
// second), and an open stream of a few dozen events holds no histogram
// (1.5 KB a stream was a tenth of the client's live heap with a thousand
// streams open, bench/README.md).
type streamTiming struct {
	// readAt is when the read that brought the bytes being scanned
	// returned: an event is timed by the read that completed it. Zero
	// until asked for in a read (stamp), so a read with no content event
	// costs no clock reading.
	readAt      time.Time
	first, last time.Time
	n           int      // content events
	few         fewGaps  // the gaps while there are at most fewGaps
	gaps        *gapHist // from gapPool, past fewGaps gaps
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
	case s.gaps != nil:
		s.gaps.add(at.Sub(s.last))
	case s.few.n < len(s.few.bucket):
		s.few.add(at.Sub(s.last))
	default:
		s.gaps = gapPool.Get().(*gapHist)
		s.few.moveTo(s.gaps)
		s.gaps.add(at.Sub(s.last))
	}
	s.last = at
	s.n++
}

// gapCount is how many gaps the answer's timing holds.
func (s *streamTiming) gapCount() int {
	if s.gaps != nil {
		return s.gaps.n
	}
	return s.few.n
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
	} else if s.few.n > 0 {
		rec.ITLP50MS = ms(s.few.median())
		rec.ITLMaxMS = ms(s.few.max)
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
	h.addBucket(bucketOf(d))
}

// addBucket counts a gap of bucket b (bucketOf) without its duration.
func (h *gapHist) addBucket(b uint16) {
	switch {
	case b < fineGaps:
		h.bump(&h.fine[b])
	case b < fineGaps+coarseGaps:
		h.bump(&h.coarse[b-fineGaps])
	default:
		h.over++
		h.n++
	}
}

// bucketOf is the bucket of gap d ≥ 0: its millisecond below fineTop,
// fineGaps + its coarseWidth-wide bucket below coarseTop, else
// overBucket.
func bucketOf(d time.Duration) uint16 {
	switch {
	case d < fineTop:
		return uint16(d / time.Millisecond)
	case d < coarseTop:
		return uint16(fineGaps + (d-fineTop)/coarseWidth)
	}
	return overBucket
}

// overBucket is the bucket of the gaps from coarseTop on.
const overBucket = fineGaps + coarseGaps

// bucketValue is the value a gap of bucket b stands for: its bucket's
// middle, beyond coarseTop halfway to the largest gap, clamped to the
// least and largest gap (lo and hi).
func bucketValue(b uint16, lo, hi time.Duration) time.Duration {
	var v time.Duration
	switch {
	case b < fineGaps:
		v = time.Duration(b)*time.Millisecond + time.Millisecond/2
	case b < overBucket:
		v = fineTop + time.Duration(b-fineGaps)*coarseWidth + coarseWidth/2
	default:
		v = (coarseTop + hi) / 2
	}
	return min(max(v, lo), hi)
}

// fewGaps holds an answer's first gaps as their buckets, for an answer
// of few content events: its median is the histogram's (the same
// buckets, the same values), in 72 bytes instead of 1.5 KB.
type fewGaps struct {
	bucket   [24]uint16
	n        int
	min, max time.Duration
}

func (f *fewGaps) add(d time.Duration) {
	d = max(d, 0)
	if f.n == 0 || d < f.min {
		f.min = d
	}
	f.max = max(f.max, d)
	f.bucket[f.n] = bucketOf(d)
	f.n++
}

// moveTo adds the gaps to h, empty, and empties f.
func (f *fewGaps) moveTo(h *gapHist) {
	h.min, h.max = f.min, f.max
	for _, b := range f.bucket[:f.n] {
		h.addBucket(b)
	}
	*f = fewGaps{}
}

// median is the gaps' median as gapHist.median reckons it.
func (f *fewGaps) median() time.Duration {
	b := f.bucket
	sorted := b[:f.n]
	slices.Sort(sorted)
	lo := bucketValue(sorted[(f.n-1)/2], f.min, f.max)
	hi := bucketValue(sorted[f.n/2], f.min, f.max)
	return (lo + hi) / 2
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
			return bucketValue(uint16(i), h.min, h.max)
		}
	}
	for i, c := range h.coarse {
		if seen += int(c); seen > k {
			return bucketValue(uint16(fineGaps+i), h.min, h.max)
		}
	}
	return bucketValue(overBucket, h.min, h.max)
}
