package capacity

import (
	"math"
	"slices"
	"time"
)

// Outcome is how one request of a step ended.
type Outcome struct {
	// Seq is the request's index in the step's plan (its offset Seq/rate).
	Seq int
	// Status is the HTTP status (0: no answer: an error or a timeout).
	Status int
	// Latency is from the send to the answer's end; TTFT to its first
	// content token (-1: none measured); TPOT the time per output token
	// after the first (-1: under two tokens); ITLMax the largest gap
	// between content events (-1: under two).
	Latency, TTFT, TPOT, ITLMax time.Duration
	// Tokens is the prompt and completion tokens of an answer (its usage).
	Tokens int
}

// Over-saturation: the TTFT rule's window and thresholds.
const (
	riseWindowMin = 10
	riseWindows   = 3 // consecutive windows whose medians rise
	riseFactor    = 1.25
	riseMargin    = time.Second
)

// Tally judges one step from its requests' outcomes as they complete.
type Tally struct {
	c                *Config
	rate             float64
	planned, judged0 int // requests planned; the first judged seq
	judged           int // judged requests planned
	met, n429        int
	answered, tokens int
	missed           int
	ttft, tpot       []float64 // ms, judged answers in completion order
	stopped          string
}

// Reasons a step stopped early.
const (
	StopMissed    = "goodput-lost"   // more missed than the target allows
	StopRefused   = "429-share-lost" // more refused than the bound allows
	StopSaturated = "ttft-rising"    // TTFT rising through the judged part
)

// NewTally is the tally of a step of c at rate.
func NewTally(c *Config, rate float64) *Tally {
	n := c.planned(rate)
	j0 := int(math.Ceil(float64(n) * (1 - JudgedShare)))
	return &Tally{c: c, rate: rate, planned: n, judged0: j0, judged: n - j0}
}

// Planned is the step's planned requests: seq 0 to Planned-1, request seq
// sent at seq/rate from the step's start.
func (t *Tally) Planned() int { return t.planned }

// Offset is when request seq is sent, from the step's start.
func (t *Tally) Offset(seq int) time.Duration {
	return time.Duration(float64(seq) / t.rate * float64(time.Second))
}

// Untimed reports that answers came 2xx and none had a time to first
// token: whatever measured them timed no stream, so an SLO term on ttft,
// tpot or itl cannot be judged.
func (t *Tally) Untimed() bool { return t.answered > 0 && len(t.ttft) == 0 }

// Stopped is why the step stopped early ("" while it runs on).
func (t *Tally) Stopped() string { return t.stopped }

// Add counts one completed request; it returns true when the step is
// clearly past the capacity and should stop (see the package doc).
func (t *Tally) Add(o Outcome) (stop bool) {
	if o.Seq < t.judged0 || t.stopped != "" {
		return t.stopped != ""
	}
	ok := o.Status >= 200 && o.Status < 300
	if o.Status == 429 {
		t.n429++
	}
	if ok {
		t.answered++
		t.tokens += o.Tokens
		if o.TTFT >= 0 {
			t.ttft = append(t.ttft, ms(o.TTFT))
		}
		if o.TPOT >= 0 {
			t.tpot = append(t.tpot, ms(o.TPOT))
		}
	}
	if ok && t.meets(o) {
		t.met++
	} else {
		t.missed++
	}
	switch {
	case float64(t.missed) > (1-t.c.Goodput)*float64(t.judged)+1e-9:
		t.stopped = StopMissed
	case float64(t.n429) > t.c.Max429Share*float64(t.judged)+1e-9:
		t.stopped = StopRefused
	case t.rising():
		t.stopped = StopSaturated
	}
	return t.stopped != ""
}

// meets reports whether an answer is within every term of the SLO.
func (t *Tally) meets(o Outcome) bool {
	s := t.c.SLO
	if s.E2E != 0 && o.Latency > s.E2E {
		return false
	}
	if !s.NeedsStream() {
		return true
	}
	if o.TTFT < 0 || s.TTFT != 0 && o.TTFT > s.TTFT {
		return false
	}
	if s.TPOT != 0 && o.TPOT > s.TPOT {
		return false
	}
	return s.ITL == 0 || o.ITLMax <= s.ITL
}

// rising reports TTFT rising through the judged part: in windows of w
// consecutive answers (an eighth of the judged requests, at least
// riseWindowMin), the medians of the latest riseWindows windows each
// above the one before, and the latest at least riseFactor times the
// first window's and riseMargin more. Checked as each window fills.
func (t *Tally) rising() bool {
	w := max(riseWindowMin, t.judged/8)
	n := len(t.ttft)
	if n%w != 0 || n < (riseWindows+1)*w {
		return false
	}
	first := medianOf(t.ttft[:w])
	prev := math.Inf(-1)
	for k := riseWindows; k >= 1; k-- {
		m := medianOf(t.ttft[n-k*w : n-(k-1)*w])
		if m <= prev {
			return false
		}
		prev = m
	}
	return prev >= riseFactor*first && prev-first >= ms(riseMargin)
}

// Step is the judged step.
func (t *Tally) Step(p Probe) Step {
	s := Step{
		Index: p.Index, Rate: p.Rate, Repeat: p.Repeat, Planned: t.planned, Judged: t.judged,
		Met: t.met, Refused429: t.n429, Answered: t.answered, StoppedEarly: t.stopped,
		TTFTP99MS: p99(t.ttft), TPOTP99MS: p99(t.tpot),
	}
	if t.judged > 0 {
		s.Goodput = float64(t.met) / float64(t.judged)
		s.Share429 = float64(t.n429) / float64(t.judged)
	}
	if t.answered > 0 {
		s.TokensPerRequest = float64(t.tokens) / float64(t.answered)
	}
	s.Margin = min(s.Goodput-t.c.Goodput, t.c.Max429Share-s.Share429)
	s.Passed = t.stopped == "" && t.judged > 0 && s.Margin >= -1e-12
	return s
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return median(s)
}

// p99 is the type-7 99th percentile of v (NaN for none).
func p99(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	h := 0.99 * float64(len(s)-1)
	i := int(h)
	if i+1 >= len(s) {
		return s[i]
	}
	return s[i] + (h-float64(i))*(s[i+1]-s[i])
}
