package sim

import (
	"bytes"
	"errors"
	"hash/maphash"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// Server is the simulator: an http.Handler that answers like the
// configured profile. All model state sits behind one mutex; the critical
// sections are a handful of float operations, so it is never the
// bottleneck (see BenchmarkServe429).
type Server struct {
	cfg   Config
	clock Clock

	mu       sync.Mutex
	rng      *rand.Rand
	lim      limiter   // the profile's admission model, chosen once by New
	style    style     // how it speaks (lim.style())
	standard *standard // nil without spillover
	cache    promptCache
	keys     keyTable
	advised  advisedWaits // the witness's memory of refusals
	advice   adviceLog    // the record of advised waits, as written
	late     latenessLog  // the witness's lateness of the last retries on time (herd.go)
	bodySeed maphash.Seed
	parsed   *parsedBodies    // the parse of recent bodies, for the retries that send them again
	tokens   *tokenMemo       // Config.Tokens, remembered by chunk; nil: characters / 4
	serving  serving          // how long admitted answers take (serving.go)
	wall     func() time.Time // the wall clock absolute times are written against
	n        counters
	seq      uint64

	inFlight atomic.Int64
}

// counters are the totals /sim/stats reports.
type counters struct {
	requests, admitted, refused, spilled, spillRefused uint64
	faults, rejected, tokenCounts, untrackedKeys       uint64
	reconciledOrg, reconciledKey, reconcileMissed      uint64
	earlyReturns, retriesOnTime, sdkRetries            uint64
	retries, markedRetries, undeclaredRetries          uint64
	overBudget, foreignKeys                            uint64
	maxCallRetries, mixedCalls                         uint64
}

// New builds a simulator from cfg after validating it.
func New(cfg Config) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, clock: cfg.Clock}
	if s.clock == nil {
		s.clock = newScaledClock(cfg.TimeScale)
	}
	// Two words of seed so different seeds give unrelated streams.
	s.rng = rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(cfg.Seed)^0x9e3779b97f4a7c15))
	if cfg.SpilloverDeployment != "" {
		s.standard = newStandard(cfg)
	}
	s.lim = newLimiter(cfg, s.clock.Now(), s.standard, &s.n)
	s.style = s.lim.style()
	s.keys.max = cfg.MaxKeys
	s.advised.max = MaxAdvisedWaits
	s.advice.max = MaxAdvice
	s.bodySeed, s.parsed = maphash.MakeSeed(), &parsedBodies{}
	s.tokens = newTokenMemo(cfg.Tokens)
	s.serving = newServing(cfg)
	s.wall = time.Now
	if c, ok := cfg.Clock.(interface{ Wall() time.Time }); ok {
		// A virtual clock that says what wall time it stands for: the
		// absolute times written (resets, dates) are on it too.
		s.wall = c.Wall
	}
	return s, nil
}

// Config returns the configuration the server runs with.
func (s *Server) Config() Config { return s.cfg }

// operation is what a route asks for.
type operation int

const (
	opNone      operation = iota
	opChat                // chat completions (Azure or OpenAI route)
	opMessages            // messages (anthropic; the gateway in azure and ietf)
	opGenerate            // generateContent (gemini)
	opCount               // gateway: token counting, free
	opImage               // gateway: image generation, reports no tokens
	opResponses           // the Responses API (openai, azure and ietf routes)
)

// bodyPool holds request bodies' buffers, each with the reader that
// limits what is read into it (no allocation per request).
var bodyPool = sync.Pool{New: func() any { return new(bodyBuffer) }}

type bodyBuffer struct {
	bytes.Buffer
	limit io.LimitedReader
}

// ServeHTTP answers one request. It survives any body: a bad one is a 400
// with one line of explanation that never quotes the body.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/sim/stats" {
		s.serveStats(w, r)
		return
	}
	rt := s.route(r.URL)
	if rt.op == opNone {
		s.reject(w, http.StatusNotFound, "404", "Resource not found")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		s.reject(w, http.StatusMethodNotAllowed, "405", "Method not allowed; use POST")
		return
	}
	key, hasKey := s.dialectKey(r.Header)
	if s.preflight(w, r, rt, hasKey) {
		return
	}
	buf := bodyPool.Get().(*bodyBuffer)
	defer func() {
		if buf.Cap() <= 64<<10 { // keep the pool from hoarding huge bodies
			buf.Reset()
			buf.limit = io.LimitedReader{}
			bodyPool.Put(buf)
		}
	}()
	buf.Reset()
	buf.limit = io.LimitedReader{R: r.Body, N: maxRequestBody + 1}
	if _, err := buf.ReadFrom(&buf.limit); err != nil {
		s.reject(w, http.StatusBadRequest, "400", "could not read the request body")
		return
	}
	if buf.Len() > maxRequestBody {
		s.reject(w, http.StatusRequestEntityTooLarge, "413", "request body too large")
		return
	}
	kind := rt.op.kind()
	sum := maphash.Bytes(s.bodySeed, buf.Bytes())
	tc := s.tokens
	given, counted := promptTokensOf(r.Context())
	if counted {
		tc = nil // the caller counted the prompt: the body is not
	}
	req, err := s.parsed.parse(buf.Bytes(), sum, kind, s.cfg.DefaultMaxTokens, tc)
	if err == nil && rt.op == opMessages && s.cfg.Dialect == DialectAnthropic && !req.MaxTokensSet {
		err = badRequest("max_tokens: Field required")
	}
	if err != nil {
		msg := "invalid request"
		if errors.Is(err, errBadRequest) {
			msg = err.Error()
		}
		s.reject(w, http.StatusBadRequest, "400", msg)
		return
	}
	if rt.op == opGenerate {
		req.Stream = rt.stream // Gemini streams by its path, not its body
	}
	countRequest(&req, rt.op, completionTokensOf(r.Context()), given, counted, tc != nil)
	v := s.newVisit(key, sum, r.Header)
	if s.style.gateway {
		s.serveGateway(w, r, rt, req, key, v)
		return
	}
	s.servePTU(w, r, rt, req, key, hasKey, v)
}

// kind is the body's kind an operation's route reads.
func (op operation) kind() bodyKind {
	switch op {
	case opCount:
		return kindCount
	case opImage:
		return kindImage
	case opGenerate:
		return kindGemini
	case opResponses:
		return kindResponses
	}
	return kindChat
}

// countRequest sets req's counts as the deployment takes them: an
// in-process caller's prompt count and completion (WithPromptTokens,
// WithCompletionTokens), else, counted with a tokenizer, the chat
// format's overhead on the chat and Responses routes.
func countRequest(req *request, op operation, completion, given int, counted, tokenized bool) {
	req.Completion = completion
	switch {
	case counted:
		req.PromptTokens, req.SystemTokens = given, min(req.SystemTokens, given)
	case tokenized && (op == opChat || op == opResponses):
		req.PromptTokens += chatOverhead(req.Messages)
	}
}

// reject answers a request the model never sees (bad route, body, key).
func (s *Server) reject(w http.ResponseWriter, status int, code, msg string) {
	s.mu.Lock()
	s.n.requests++
	s.n.rejected++
	s.mu.Unlock()
	s.writeError(w, status, code, msg)
}

// target is which deployment serves a PTU-profile request.
type target int

const (
	targetPTU target = iota
	targetStandard
)

// arrive is how every request the model sees begins, on either profile:
// it is counted and draws its injected fault. It returns the model time
// of arrival and whether the request goes on to the model: a fault is
// answered here instead, and a slow one first waits SlowDelay (false if
// the client left meanwhile). The witness judges a retry by when it
// arrived, not by when a slow fault let the model see it.
func (s *Server) arrive(w http.ResponseWriter, r *http.Request) (time.Time, bool) {
	s.mu.Lock()
	at := s.clock.Now()
	s.n.requests++
	fault := s.pickFault()
	if fault != "" {
		s.n.faults++
	}
	s.mu.Unlock()
	switch fault {
	case "":
		return at, true
	case FaultSlow:
		return at, s.clock.Sleep(r.Context(), s.cfg.SlowDelay) == nil
	}
	s.writeFault(w, fault)
	return at, false
}

// outcome is the model's decision about one request, taken under s.mu.
type outcome struct {
	admission         // the limiter's (or the standard deployment's) decision
	direct     bool   // sent to the standard deployment by name, not spilled
	ans        answer // what the answer writes about them, fixed at the decision
	cached     int
	completion int
	estimate   float64
	id         uint64
	created    int64
	ttft, tpot time.Duration // admitted: its time to first token and per token (serving)
	serving    bool          // admitted into s.serving: it leaves when complete
}

func (s *Server) servePTU(w http.ResponseWriter, r *http.Request, rt route, req request, key string, hasKey bool, v visit) {
	tgt, spill, ok := s.ptuTarget(w, r, rt, &req)
	if !ok {
		return
	}
	v.id = v.id.to(tgt)
	if v.at, ok = s.arrive(w, r); !ok {
		return
	}

	var o outcome
	s.mu.Lock()
	now := s.clock.Now()
	c := s.decidePTU(now, tgt, spill, &req, &o)
	ks := s.trackKey(key, hasKey)
	var keyIndex int32
	if ks != nil {
		keyIndex = int32(ks.index)
		if o.admitted {
			ks.admitted++
		} else {
			ks.refused++
		}
	}
	o.ans = s.answerOf(o.lim, !o.admitted, o.wait)
	s.advice.record(&o.ans, keyIndex)
	s.witness(ks, v, now, &o.ans)
	s.mu.Unlock()

	if !o.admitted {
		s.write429PTU(w, &o)
		return
	}
	s.inFlight.Add(1)
	defer s.inFlight.Add(-1)
	h := w.Header()
	if o.standard {
		h.Set("X-Ms-Deployment-Name", s.standard.name)
		if o.spilled {
			h.Set("X-Ms-Spillover-From-Deployment", s.cfg.Deployment)
		}
		if s.cfg.Dialect == DialectAzure {
			setInt2(h, "X-Ratelimit-Remaining-Requests", o.remReq, "X-Ratelimit-Remaining-Tokens", o.remTok)
		}
	}
	s.writeLimits(h, &o.ans)
	done := func() {
		s.mu.Lock()
		s.lim.complete(s.clock.Now(), c, o.admission, o.completion)
		s.leave(&o)
		s.mu.Unlock()
	}
	s.respond(w, r, rt, &req, &o, done)
}

// ptuTarget finds the deployment a call names (in its route, else in its
// model) and whether it may spill over to the standard deployment. Any
// name but the standard deployment's is the PTU deployment: real clients
// send the model or deployment their code names (gpt-4o, a customer's
// deployment), and a test double that refused them would test nothing.
// The name is neither kept nor echoed. It answers the call itself (ok
// false) when it names no model at all, or a spillover deployment that
// does not exist.
func (s *Server) ptuTarget(w http.ResponseWriter, r *http.Request, rt route, req *request) (tgt target, spill, ok bool) {
	name := rt.deployment
	if !rt.named {
		name = req.Model
		if name == "" {
			s.reject(w, http.StatusBadRequest, "400", "'model' is required: it names the deployment")
			return 0, false, false
		}
	}
	if s.standard != nil && name == s.standard.name {
		tgt = targetStandard
	}
	spill = s.standard != nil && !s.cfg.SpilloverPerRequest
	if h := field(r.Header, "X-Ms-Spillover-Deployment"); h != "" {
		if s.standard == nil || h != s.standard.name {
			s.reject(w, http.StatusBadRequest, "InvalidSpilloverDeployment", "The spillover deployment named in x-ms-spillover-deployment does not exist.")
			return 0, false, false
		}
		spill = true
	}
	return tgt, spill, true
}

// respond serves an admitted call in its operation's shape.
func (s *Server) respond(w http.ResponseWriter, r *http.Request, rt route, req *request, o *outcome, done func()) {
	switch rt.op {
	case opMessages:
		s.respondMessage(w, r, req, o, done)
	case opGenerate:
		s.respondGemini(w, r, rt, req, o, done)
	case opResponses:
		s.respondResponse(w, r, req, o, done)
	default:
		s.respondCompletion(w, r, req, o, done)
	}
}

// decidePTU is the decision on one arrival at now of a call routed as
// the PTU profile routes it (ptu and window): the standard deployment
// when the call names it, else the limiter. It returns the call as the
// limiter saw it, for its completion. Called with s.mu held.
func (s *Server) decidePTU(now time.Time, tgt target, spill bool, req *request, o *outcome) call {
	o.cached = s.cache.cachedTokens(now, req)
	o.estimate = s.cfg.EstimatedCost(req.PromptTokens, o.cached, req.MaxTokens)
	c := call{prompt: req.PromptTokens, cached: o.cached, maxTokens: req.MaxTokens, estimate: o.estimate, spill: spill}
	if tgt == targetStandard {
		sv := s.standard.admit(now, c.standardEstimate())
		o.admitted, o.standard, o.direct, o.wait = sv.admitted, true, true, sv.wait
		o.remReq, o.remTok = sv.remainingRequests, sv.remainingTokens
		o.lim = s.standard.limitsOf(now, sv.requestsRefused, sv.tokensRefused)
	} else {
		o.admission = s.lim.admit(now, c)
	}
	if !o.admitted {
		s.n.refused++
		return c
	}
	s.n.admitted++
	s.cache.remember(now, req)
	o.completion = s.completionOf(req.Completion, req.MaxTokens)
	s.seq++
	o.id = s.seq
	o.created = now.Unix()
	if o.standard {
		o.ttft, o.tpot = s.serving.idle(req.PromptTokens, o.cached)
		return c
	}
	o.ttft, o.tpot = s.serving.admit(now, req.PromptTokens, o.cached)
	o.serving = true
	return c
}

// leave takes an admitted answer out of the ones in flight once it is
// complete, or its client left. Called with s.mu held.
func (s *Server) leave(o *outcome) {
	if o.serving {
		s.serving.leave()
		o.serving = false
	}
}

// completionOf is an admitted answer's completion length: given's (an
// in-process caller's, WithCompletionTokens), at most maxTokens, else
// drawn. Called with s.mu held.
func (s *Server) completionOf(given, maxTokens int) int {
	if given >= 1 {
		return min(given, maxTokens)
	}
	return s.drawCompletion(maxTokens)
}

// drawCompletion draws a completion length uniformly from
// completionRange. Called with s.mu held, so the draw order is the
// arrival order.
func (s *Server) drawCompletion(maxTokens int) int {
	lo, hi := completionRange(maxTokens)
	if hi <= lo {
		return hi
	}
	return lo + s.rng.IntN(hi-lo+1)
}

// completionRange is the range a completion's length is drawn from: 30%
// (rounded up, at least 1) to 100% of its budget; Capacity reads its mean.
func completionRange(maxTokens int) (lo, hi int) {
	lo = max(1, int(math.Ceil(0.3*float64(maxTokens))))
	if maxTokens <= lo {
		return maxTokens, maxTokens
	}
	return lo, maxTokens
}

// trackKey returns the per-key counters of the caller, or nil when the
// table is full. Called with s.mu held.
func (s *Server) trackKey(key string, hasKey bool) *keyState {
	if !hasKey {
		key = ""
	}
	ks, ok := s.lim.track(&s.keys, key)
	if !ok {
		s.n.untrackedKeys++
	}
	return ks
}

// latency is the model time o's whole answer takes: its time to first
// token and its completion at the time per token of its admission.
func latency(o *outcome) time.Duration {
	return o.ttft + time.Duration(o.completion)*o.tpot
}

// wallMS converts a model-time wait to whole wall-clock milliseconds,
// rounded up, as retry-after-ms carries it.
func (s *Server) wallMS(d time.Duration) int64 {
	ms := float64(d) / float64(time.Millisecond) / s.cfg.TimeScale
	return max(1, int64(math.Ceil(ms-1e-9)))
}
