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

// throughput is a Tally's timeline, grown as rows come.
type throughput struct {
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
	if s >= len(tp.secs) {
		if s < cap(tp.secs) {
			tp.secs = tp.secs[:s+1]
		} else {
			grown := make([]ThroughputSecond, s+1, max(2*cap(tp.secs), s+1, 64))
			copy(grown, tp.secs)
			tp.secs = grown
		}
	}
	return &tp.secs[s]
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
	if len(o.secs) > len(tp.secs) {
		tp.at(float64(len(o.secs)-1) * 1000)
	}
	for i := range o.secs {
		tp.secs[i].Tokens += o.secs[i].Tokens
		tp.secs[i].Refused += o.secs[i].Refused
		tp.secs[i].Offered += o.secs[i].Offered
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

// trimmed is a copy of tp's seconds up to the last that holds anything.
func (tp *throughput) trimmed() []ThroughputSecond {
	n := len(tp.secs)
	for n > 0 && tp.secs[n-1] == (ThroughputSecond{}) {
		n--
	}
	if n == 0 {
		return nil
	}
	return append([]ThroughputSecond(nil), tp.secs[:n]...)
}
