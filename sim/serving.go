package sim

import (
	"context"
	"math"
	"time"
)

// The serving model's constants (the package doc, "Timing", has their
// arithmetic and sources).
const (
	// PrefillTokensPerPTU is how fast a deployment reads prompts, in
	// tokens per second per PTU: 170 PTU prefill 17,000 tokens a second,
	// a 4,000-token prompt in 235 ms. An assumption of the order public
	// measurements of gpt-4o-class models' time to first token against
	// prompt length show (tens of microseconds a prompt token), not a
	// measurement of Azure's; scaled by the deployment's size because a
	// larger deployment has more accelerators to read a prompt with.
	PrefillTokensPerPTU = 100
	// PrefillRefTokens is the prompt TTFT is the time to first token of:
	// the client's default prompt (--prompt-tokens 1000). A longer
	// prompt waits longer, a shorter one less.
	PrefillRefTokens = 1000
	// servingMinPTU is the least size the serving model reads a
	// deployment as: Azure's smallest provisioned deployment (15 PTU,
	// gpt-4o global and data-zone; "Provisioned throughput minimums").
	// A smaller PTU setting shapes admission only (the referee's
	// long-wait scenario drains one token a budget), not the accelerators
	// that serve what is admitted.
	servingMinPTU = 15
)

// serving is how long an admitted answer takes, beside whether it is
// admitted: its time to first token (prefill, behind the prompts
// admitted before it) and its time per output token (the deployment's
// decode shared by the answers in flight). Off (TTFT and TPOT flat) for
// an instant deployment, TTFT and TPOT both 0: the tests' and benchmarks'.
type serving struct {
	on         bool
	ttft, tpot time.Duration
	prefill    float64 // prompt tokens a second
	decode     float64 // output tokens a second, all answers together; 0: unbounded

	backlog float64   // prompt tokens admitted and not yet prefilled, at last
	last    time.Time // when backlog was last drained
	active  int       // answers in flight: admitted, not complete
}

// PrefillRate is how many prompt tokens a second a deployment of ptu
// PTU reads (PrefillTokensPerPTU a PTU, from servingMinPTU on): a prompt
// of n tokens waits (n − PrefillRefTokens) ÷ PrefillRate longer than
// TTFT for its first token. The fit reads a recorded run's latency line
// through it.
func PrefillRate(ptu float64) float64 { return max(ptu, servingMinPTU) * PrefillTokensPerPTU }

// DecodeRate is how many output tokens a second a deployment of c's
// size decodes, all its answers together (0: unbounded, an OutputWeight
// of 0): n answers in flight are decoded at max(TPOT, n ÷ DecodeRate) a
// token. The fit reads a recorded run's latency line through it.
func DecodeRate(c Config) float64 {
	if c.OutputWeight <= 0 {
		return 0
	}
	return max(c.PTU, servingMinPTU) * c.TokensPerPTU / 60 / c.OutputWeight
}

func newServing(c Config) serving {
	return serving{on: c.TTFT > 0 || c.TPOT > 0, ttft: c.TTFT, tpot: c.TPOT, prefill: PrefillRate(c.PTU), decode: DecodeRate(c)}
}

// admit is an admitted answer's time to first token and its time per
// output token, at now, for a prompt of prompt tokens (cached of them
// served from the cache, which are not prefilled); the answer joins the
// ones in flight until leave. Called with s.mu held.
func (v *serving) admit(now time.Time, prompt, cached int) (ttft, tpot time.Duration) {
	if !v.on {
		return v.ttft, v.tpot
	}
	if dt := now.Sub(v.last).Seconds(); dt > 0 || v.last.IsZero() {
		v.backlog = math.Max(0, v.backlog-v.prefill*math.Max(dt, 0))
		v.last = now
	}
	read := float64(max(prompt-cached, 0))
	queue := v.backlog / v.prefill
	v.backlog += read
	v.active++
	return v.idleTTFT(read) + seconds(queue), v.tpotAt(v.active)
}

// idle is the time to first token and per token of an answer from a
// deployment with nothing else in flight: the standard deployment's,
// pay-as-you-go capacity shared by so many that one caller never loads
// it.
func (v *serving) idle(prompt, cached int) (ttft, tpot time.Duration) {
	if !v.on {
		return v.ttft, v.tpot
	}
	return v.idleTTFT(float64(max(prompt-cached, 0))), v.tpot
}

// idleTTFT is TTFT moved by the prompt's distance from PrefillRefTokens
// at the prefill rate, never below 0.
func (v *serving) idleTTFT(read float64) time.Duration {
	return max(0, v.ttft+seconds((read-PrefillRefTokens)/v.prefill))
}

// leave is an answer's completion (or its client's going). Called with
// s.mu held.
func (v *serving) leave() {
	if v.on {
		v.active--
	}
}

// tpotAt is the time per token with n answers in flight: TPOT while the
// deployment decodes them all at 1/TPOT each — N = decode × TPOT of
// them, and always at least one — and TPOT × n ÷ N once they would need
// more than it has (n ÷ decode when N is 1 or more).
func (v *serving) tpotAt(n int) time.Duration {
	if !v.on || v.tpot == 0 || v.decode == 0 {
		return v.tpot
	}
	full := max(1, v.decode*v.tpot.Seconds())
	return max(v.tpot, seconds(v.tpot.Seconds()*float64(n)/full))
}

// tpotNow is the time per token of the moment, for a stream's next
// chunk.
func (s *Server) tpotNow() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.serving.tpotAt(s.serving.active)
}

func seconds(f float64) time.Duration { return time.Duration(math.Round(f * 1e9)) }

// decode waits out o's completion, chunk by chunk, and hands each
// chunk's text to emit (a space after all but the last; sent is the
// tokens sent with it, last whether it ends the completion): the first
// token at once — the stream's headers left at its time to first token
// — then up to streamChunkTokens at a time, each chunk when its last
// token is decoded at the time per token of the moment. So token k
// leaves at TTFT + (k−1) × TPOT, each chunk at its own time. It returns
// false, having called done, when the client went away.
func (s *Server) decode(ctx context.Context, o *outcome, done func(), emit func(text string, sent int, last bool)) bool {
	for sent := 0; sent < o.completion; {
		n := min(streamChunkTokens, o.completion-sent)
		wait := n
		if sent == 0 {
			n, wait = 1, 0
		}
		if wait > 0 && s.clock.Sleep(ctx, time.Duration(wait)*s.tpotNow()) != nil {
			done()
			return false
		}
		text := fillerText(n)
		sent += n
		last := sent >= o.completion
		if !last {
			text += " "
		}
		emit(text, sent, last)
	}
	return true
}
