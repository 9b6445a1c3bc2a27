package sim

import (
	"net/http"
	"strconv"
	"time"
)

// imageEstimateTokens is what the gateway charges per generated image:
// image generation reports no token usage, so the estimate is final.
const (
	imageEstimateTokens = 1000
	imageLatency        = 500 * time.Millisecond // model time per image
)

func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request, rt route, req request, key string, v visit) {
	if rt.op == opCount {
		s.serveTokenCount(w, req)
		return
	}
	est := int64(req.PromptTokens + req.MaxTokens)
	if rt.op == opImage {
		est = int64(req.Images * imageEstimateTokens)
	}
	var ok bool
	if v.at, ok = s.arrive(w, r); !ok {
		return
	}
	c := call{prompt: req.PromptTokens, maxTokens: req.MaxTokens, est: est, image: rt.op == opImage, completion: req.Completion}
	o, tracked := s.gatewayDecide(key, v, &c)
	if !tracked {
		s.writeError(w, http.StatusForbidden, "403", "this gateway tracks no more distinct keys")
		return
	}
	h := w.Header()
	if s.cfg.Dialect == DialectAzure {
		setInt2(h, "X-Ratelimit-Remaining-Requests", o.remReq, "X-Ratelimit-Remaining-Tokens", o.remTok)
	}
	if !o.admitted {
		what := "your " + o.refusal.holder + "'s rate limit of " + o.refusal.limit
		if s.cfg.Dialect != DialectAzure {
			s.writeRefusal(w, &o.ans, what)
			return
		}
		writeRetryHeaders(h, &o.ans)
		s.writeGatewayError(w, http.StatusTooManyRequests, "rate_limit_error",
			"This request would exceed "+what+". Please reduce the rate of requests or contact support to raise the limit.")
		return
	}
	s.writeLimits(h, &o.ans)
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	reconcile := func() {
		s.mu.Lock()
		s.lim.complete(s.clock.Now(), c, o.admission, o.completion)
		s.leave(&o)
		s.mu.Unlock()
	}
	if rt.op == opImage {
		if s.clock.Sleep(r.Context(), s.cfg.TTFT+time.Duration(req.Images)*imageLatency) != nil {
			reconcile()
			return
		}
		reconcile()
		s.writeImages(w, req.Images, o.created)
		return
	}
	s.respond(w, r, rt, &req, &o, reconcile)
}

// serveTokenCount answers a token-counting call: it does not reach the
// provider and costs nothing against either ceiling.
func (s *Server) serveTokenCount(w http.ResponseWriter, req request) {
	s.mu.Lock()
	s.n.requests++
	s.n.tokenCounts++
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	w.Write(strconv.AppendInt(append(make([]byte, 0, 32), `{"input_tokens":`...), int64(req.PromptTokens), 10))
	w.Write([]byte("}\n"))
}

// gatewayDecide checks call c against its key and organization under
// the lock (the limiter's admit), and counts it. tracked is false when
// the key table is full (the call is rejected). A refusal advises the
// wait to the end of the refusing window, written as the dialect writes
// it (o.ans); in the azure dialect only with GatewayRetryAfter, as
// retry-after in whole seconds, rounded up.
func (s *Server) gatewayDecide(key string, v visit, c *call) (o outcome, tracked bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.clock.Now()
	ks, ok := s.lim.track(&s.keys, key)
	if !ok {
		s.n.untrackedKeys++
		s.n.rejected++
		return o, false
	}
	c.ks = ks
	o.admission = s.lim.admit(now, *c)
	if o.admitted {
		s.n.admitted++
		ks.admitted++
		if !c.image {
			o.completion = s.completionOf(c.completion, c.maxTokens)
			o.ttft, o.tpot = s.serving.admit(now, c.prompt, 0)
			o.serving = true
		}
		s.seq++
		o.id, o.created = s.seq, now.Unix()
	} else {
		s.n.refused++
		ks.refused++
	}
	o.ans = s.answerOf(o.lim, !o.admitted, o.wait)
	s.advice.record(&o.ans, int32(ks.index))
	s.witness(ks, v, now, &o.ans)
	return o, true
}
