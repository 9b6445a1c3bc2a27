package analyze

import "github.com/ptuprobe/ptuprobe/results"

// The throughput timeline: second by second, the tokens the deployment
// delivered (prompt + completion tokens of the successful answers, as
// Azure meters a deployment's tokens per minute), the attempts it refused
// with a 429 and the attempts the client offered. A row is placed on its
// own plan's clock (ms since its plan started, as sent_ms and
// intended_ms count): an answer's tokens in the second it completed
// (sent_ms + latency_ms), a 429 in the second it was sent, an offered
// attempt in the second it was meant to be sent (intended_ms). Plans are
// laid over one another from their starts, as a group's span lays them
// (requests.go): the workers of a fleet add up, and characterize's burst
// and scheduled plans share the first seconds. The timeline costs 24
// bytes a second of run, whatever the rows, up to MaxThroughputSeconds;
// rows past it are counted in ThroughputBeyond and not placed.

// MaxThroughputSeconds bounds the timeline: a day of seconds.
const MaxThroughputSeconds = 24 * 60 * 60

// ThroughputSecond is one second of the throughput timeline.
type ThroughputSecond struct {
	Tokens  int64 // prompt + completion tokens of the answers completed in it (2xx, with a usage)
	Refused int   // attempts sent in it and answered 429
	Offered int   // attempts meant to be sent in it (intended_ms)
}

// throughput is a Tally's timeline, grown as rows come: secs[i] is second
// first+i, so that the Tally of one block of a file (blocks.go) holds the
// seconds of its rows only, not every second before them.
type throughput struct {
	first  int
	secs   []ThroughputSecond
	beyond int
}

// at returns the second of ms, growing the timeline; nil past its bound
// or for an absent time.
func (tp *throughput) at(ms float64) *ThroughputSecond {
	if ms < 0 || ms >= MaxThroughputSeconds*1000 || ms != ms {
		if ms >= 0 {
			tp.beyond++
		}
		return nil
	}
	s := int(ms / 1000)
	switch {
	case len(tp.secs) == 0:
		tp.first, tp.secs = s, make([]ThroughputSecond, 1, 64)
	case s < tp.first: // rows complete out of order: a few seconds back
		grown := make([]ThroughputSecond, tp.first-s+len(tp.secs), max(2*cap(tp.secs), tp.first-s+len(tp.secs)))
		copy(grown[tp.first-s:], tp.secs)
		tp.first, tp.secs = s, grown
	case s-tp.first >= len(tp.secs):
		n := s - tp.first + 1
		if n <= cap(tp.secs) {
			tp.secs = tp.secs[:n]
		} else {
			grown := make([]ThroughputSecond, n, max(2*cap(tp.secs), n))
			copy(grown, tp.secs)
			tp.secs = grown
		}
	}
	return &tp.secs[s-tp.first]
}

// add places one attempt sent.
func (tp *throughput) add(rec *results.Record) {
	if s := tp.at(rec.IntendedMS); s != nil {
		s.Offered++
	}
	switch {
	case rec.Status == 429:
		if s := tp.at(rec.SentMS); s != nil {
			s.Refused++
		}
	case rec.Error == "" && rec.Status >= 200 && rec.Status <= 299 && rec.SentMS >= 0 && rec.LatencyMS >= 0:
		tokens := int64(max(rec.PromptTokens, 0)) + int64(max(rec.CompletionTokens, 0))
		if tokens == 0 {
			return
		}
		if s := tp.at(rec.SentMS + rec.LatencyMS); s != nil {
			s.Tokens += tokens
		}
	}
}

// absorb adds o's seconds to tp's.
func (tp *throughput) absorb(o *throughput) {
	if len(o.secs) > 0 {
		tp.at(float64(o.first) * 1000) // make room for o's span at both ends
		tp.at(float64(o.first+len(o.secs)-1) * 1000)
	}
	for i, s := range o.secs {
		d := &tp.secs[o.first+i-tp.first]
		d.Tokens += s.Tokens
		d.Refused += s.Refused
		d.Offered += s.Offered
	}
	tp.beyond += o.beyond
}

// Throughput is the run's timeline, second by second from 0 to the last
// second that holds anything (a copy); nil without ptuprobe rows sent.
func (a *Analysis) Throughput() []ThroughputSecond { return a.throughput }

// TokensPerMinute is the achieved tokens per minute at each second of
// tl: the tokens of the trailing minute (that second and the 59 before
// it), or over the seconds so far, scaled to a minute, in the first
// minute.
func TokensPerMinute(tl []ThroughputSecond) []float64 {
	out := make([]float64, len(tl))
	var window int64
	for i := range tl {
		window += tl[i].Tokens
		if i >= 60 {
			window -= tl[i-60].Tokens
		}
		out[i] = float64(window) * 60 / float64(min(i+1, 60))
	}
	return out
}

// trimmed is tp's seconds from 0 up to the last that holds anything, a
// copy.
func (tp *throughput) trimmed() []ThroughputSecond {
	n := len(tp.secs)
	for n > 0 && tp.secs[n-1] == (ThroughputSecond{}) {
		n--
	}
	if n == 0 {
		return nil
	}
	out := make([]ThroughputSecond, tp.first+n)
	copy(out[tp.first:], tp.secs[:n])
	return out
}
