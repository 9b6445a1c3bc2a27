package sim

import "time"

// standard is the pay-as-you-go deployment that spillover sends work to.
// Its limits are the documented standard-deployment ones: estimated
// tokens (prompt + max_tokens, unweighted) per minute, and requests per
// minute enforced over 1-second windows (RPM/60 each second, at least 1).
type standard struct {
	name     string
	requests window
	tokens   window
}

func newStandard(cfg Config) *standard {
	return &standard{
		name:     cfg.SpilloverDeployment,
		requests: newWindow(time.Second, int64(max(1, cfg.StandardRPM/60))),
		tokens:   newWindow(time.Minute, int64(cfg.StandardTPM)),
	}
}

// standardVerdict is the standard deployment's answer plus what its
// x-ratelimit-remaining-* headers report after it.
type standardVerdict struct {
	admitted          bool
	requestsRefused   bool // the requests window refused it
	tokensRefused     bool // the tokens window refused it
	wait              time.Duration
	remainingRequests int64
	remainingTokens   int64
}

// admit charges one request of est tokens if both windows have room; a
// refusal's wait is until the binding window ends.
func (s *standard) admit(now time.Time, est int64) standardVerdict {
	s.requests.arrive(now)
	s.tokens.arrive(now)
	v := standardVerdict{}
	okReq, okTok := s.requests.fits(1), s.tokens.fits(est)
	if okReq && okTok {
		s.requests.add(1)
		s.tokens.add(est)
		v.admitted = true
	} else {
		v.requestsRefused, v.tokensRefused = !okReq, !okTok
		if !okReq {
			v.wait = s.requests.resetIn(now)
		}
		if !okTok {
			v.wait = max(v.wait, s.tokens.resetIn(now))
		}
	}
	v.remainingRequests = s.requests.remaining()
	v.remainingTokens = s.tokens.remaining()
	return v
}
