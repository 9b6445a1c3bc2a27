package policylab

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/vrun"
	"github.com/ptuprobe/ptuprobe/sim"
)

// epoch is the virtual clock's start: a fixed instant, so a run's every
// time is a function of its flags and seed.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// fallbackDeployment is the simulator's standard deployment, the
// fallback a redirect goes to.
const fallbackDeployment = "sim-standard"

// apiVersion is the Azure route's api-version on the lab's requests.
const apiVersion = "2024-10-21"

// virtualRun is one run of one policy on the embedded simulator: the
// plan's arrivals spread over Clients clients, each its own
// admission.Transport configured as the policy, all on one virtual clock
// with the simulator, in process (internal/vrun). Nothing reads the
// runtime clock, so the outcome is a function of the fields alone.
type virtualRun struct {
	Spec     policy.Spec
	Sim      sim.Config // Seed included; Clock is set per run
	Rate     float64    // arrivals per second
	Duration time.Duration
	// Warmup and Tail are arrivals before and after the Duration
	// measured (the steady state, measure.go): the plan is Warmup +
	// Duration + Tail long.
	Warmup, Tail time.Duration
	Arrival      Arrival
	Clients      int
	Seed         uint64
	// Budget is the lab's latency budget per request: a request not
	// answered 2xx within it is not a success, whatever its policy.
	Budget       time.Duration
	PromptTokens int
	MaxTokens    int
	// sizes, when given, size request i as sizes[i mod len(sizes)].
	sizes []requestSize
	// StoreDelay is what a call to the fleet's shared store costs on the
	// virtual clock (Lab.StoreDelay).
	StoreDelay time.Duration
}

// runOutcome is what a run measured.
type runOutcome struct {
	Requests, Succeeded, GaveUp, Redirected int
	Attempts, HTTP429, OverBudget           int
	// InPlan are the successes answered within the plan's length: the
	// deployment's goodput while the load was on.
	InPlan                   int
	EarlyReturns, SDKRetries int
	SuccessE2E               []float64 // ms, sorted
	// ClientSuccessPct is each client's share of its requests that
	// succeeded (wall-clock runs only; nil on the virtual clock).
	ClientSuccessPct []float64
	// Fallbacks are the decisions a coordinated run's clients took on
	// their own state because the Coordinator failed.
	Fallbacks int64
	// CoordinatorCalls are the shared decisions they made in all.
	CoordinatorCalls int64
	// Each is how every offered request ended, in arrival order: the
	// steady state's measure is read from it.
	Each []requestOutcome
}

// reach is the highest attempt number any request of the run reached.
func (o *runOutcome) reach() int {
	n := 0
	for i := range o.Each {
		n = max(n, int(o.Each[i].reach))
	}
	return n
}

// plan is the length of the run's arrivals: the window measured and the
// arrivals around it.
func (v *virtualRun) plan() time.Duration { return v.Warmup + v.Duration + v.Tail }

// arrivals are the plan's offsets: Rate per second for the plan's
// length, as Arrival spreads them (seeded).
func (v *virtualRun) arrivals() []time.Duration {
	return v.Arrival.offsets(v.Rate, v.plan(), v.Seed)
}

// count is the number of arrivals of the plan.
func (v *virtualRun) count() int {
	if v.Arrival.Kind == arrivalConstant || v.Arrival.Kind == "" {
		return int(math.Floor(v.Rate * v.plan().Seconds()))
	}
	return len(v.arrivals())
}

// run plays the plan once and returns what it measured, or ctx's error
// when ctx ended first (the run is then incomplete and not returned).
func (v *virtualRun) run(ctx context.Context) (runOutcome, error) {
	cfg := v.Sim
	// A policy that reads the utilization gets the header a PTU
	// deployment sends; no other policy reads it.
	cfg.UtilizationHeader = cfg.UtilizationHeader || v.Spec.Utilization > 0
	if cfg.SpilloverDeployment == "" {
		cfg.SpilloverDeployment, cfg.SpilloverPerRequest = fallbackDeployment, true
	}
	// A success's body is the lab's alone, and it reads none: only the
	// refusals' (which the retry owner reads for advice) are kept.
	r, err := vrun.New(cfg, vrun.Options{Start: epoch, BodyOf: func(status int) bool { return status >= 300 }})
	if err != nil {
		return runOutcome{}, err
	}
	clients, store, err := v.clients(r)
	if err != nil {
		return runOutcome{}, err
	}
	var out runOutcome
	body := newLabBody(v.PromptTokens, v.MaxTokens, v.sizes)
	counted := sim.WithPromptTokens(ctx, body.tokens(0)) // the body's count travels with it
	arrivals := v.arrivals()
	out.Each = make([]requestOutcome, len(arrivals))
	r.Plan(epoch, arrivals, func(i int) {
		c := counted
		if len(v.sizes) > 0 {
			c = sim.WithPromptTokens(ctx, body.tokens(i))
		}
		clients[i%len(clients)].request(c, i, body, v.Budget, &out)
	})
	if err := r.Play(ctx); err != nil {
		return runOutcome{}, err
	}
	early, sdk := r.Server.Returns()
	out.EarlyReturns, out.SDKRetries = int(early), int(sdk)
	if store != nil {
		out.CoordinatorCalls, out.Fallbacks = store.Calls(), store.Fallbacks()
	}
	slices.Sort(out.SuccessE2E)
	return out, nil
}

// labClient is one application instance of the fleet: its own key, its
// own retry owner (and so its own cooldown and pace).
type labClient struct {
	clock *vrun.Run
	owner http.RoundTripper
	key   string
	// keyValue is key as a header's values.
	keyValue []string
	spec     policy.Spec
	plan     time.Duration // the plan's length
	target   *url.URL
}

func (v *virtualRun) clients(r *vrun.Run) ([]*labClient, *admission.MemoryCoordinator, error) {
	server := r.Server
	target := &url.URL{Scheme: "http", Host: "lab.invalid", Path: "/openai/deployments/" + server.Config().Deployment + "/chat/completions",
		RawQuery: "api-version=" + apiVersion}
	out := make([]*labClient, max(v.Clients, 1))
	env := policy.Env{Clock: r, Fallback: toStandard(server.Config().Deployment, fallbackDeployment)}
	var store *admission.MemoryCoordinator
	if v.Spec.Slots {
		// Distinct slots are the fleet's, shared through a store that
		// costs each decision a round trip on the virtual clock, as a
		// fleet's Redis does (and each client falls back to its own).
		var err error
		if store, err = admission.NewMemoryCoordinator(admission.MemoryOptions{Delay: v.StoreDelay, Clock: r}); err != nil {
			return nil, nil, err
		}
		env.Coordinator = store
	}
	for i := range out {
		p, err := v.clientPolicy(i, env)
		if err != nil {
			return nil, nil, err
		}
		owner, err := admission.New(r.Transport, *p)
		if err != nil {
			return nil, nil, err
		}
		out[i] = &labClient{clock: r, owner: owner, key: "lab-client-" + strconv.Itoa(i), keyValue: []string{"lab-client-" + strconv.Itoa(i)}, spec: v.Spec, target: target, plan: v.plan()}
	}
	return out, store, nil
}

// fleetSlots are the Slots every client of a wall-clock run shares in
// process, or nil when the policy takes none.
func (v *virtualRun) fleetSlots() *admission.Slots {
	if !v.Spec.Slots {
		return nil
	}
	return admission.NewSlots(v.Spec.SlotWidth)
}

// clientPolicy is client i's retry owner in env (policy.Spec.Build): the
// policy, its jitter and backoff seeded per client, its own state, and
// what env gives the fleet.
func (v *virtualRun) clientPolicy(i int, env policy.Env) (*admission.Policy, error) {
	if env.Rand == nil {
		env.Rand = seededRand(v.clientSeed(i))
	}
	return v.Spec.Build(env)
}

// clientSeed is client i's seed of its jitter and backoff.
func (v *virtualRun) clientSeed(i int) uint64 { return v.Seed*1_000_003 + uint64(i) + 1 }

// request sends arrival seq as the client's application would: through
// its retry owner, inside the application's own retry loop for stacked
// owners, and counts what happened.
func (c *labClient) request(ctx context.Context, seq int, body *labBody, budget time.Duration, out *runOutcome) {
	start := c.clock.Now()
	out.Requests++
	q := &out.Each[seq]
	q.at = start.Sub(epoch)
	var (
		sent, redirected bool
		lastStatus       int
		lastAnswer       time.Time
	)
	watch := func(a admission.Attempt) {
		q.reach = max(q.reach, int32(a.Attempt))
		q.local = a.Sent.IsZero()
		if q.local {
			return // refused locally (cooldown, pace): nothing reached the deployment
		}
		sent = true
		out.Attempts++
		q.attempts++
		if a.Status == http.StatusTooManyRequests {
			out.HTTP429++
			q.http429++
		}
		if a.Fallback {
			redirected = true
		}
		lastStatus, lastAnswer = a.Status, a.Headers
	}
	// The application's loop around the owner (stacked's; one call for
	// every other policy): again while a call's answer is no success.
	stopped := false
	c.spec.Outer().Run(func(int) bool {
		req, err := c.newRequest(admission.WithAttemptObserver(ctx, watch), seq, body)
		if err != nil {
			stopped = true
			return false
		}
		resp, err := c.owner.RoundTrip(req)
		if resp != nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		if ctx.Err() != nil {
			stopped = true
			return false
		}
		return err != nil || resp.StatusCode >= 300
	}, func(d time.Duration) bool {
		stopped = c.clock.Sleep(ctx, d) != nil
		return !stopped
	})
	if stopped {
		return
	}
	if redirected {
		out.Redirected++
	}
	e2e := lastAnswer.Sub(start)
	if !sent {
		e2e = c.clock.Now().Sub(start)
	}
	q.e2e, q.redirected = e2e, redirected
	q.late = budget > 0 && e2e > budget
	q.ok = lastStatus >= 200 && lastStatus < 300 && (budget <= 0 || e2e <= budget)
	out.end(sent, lastStatus, ms(e2e), ms(budget), lastAnswer.Sub(epoch) <= c.plan)
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// end counts how one request ended: sent at all, its last status, its end
// to end latency in ms against the budget (0: none), and whether its last
// answer came while the plan's arrivals were on. A 2xx after the budget is
// over budget and given up; so is a refusal answered past it.
func (o *runOutcome) end(sent bool, status int, e2eMS, budgetMS float64, inPlan bool) {
	ok := status >= 200 && status < 300
	within := budgetMS <= 0 || e2eMS <= budgetMS
	switch {
	case !sent:
		o.GaveUp++
	case ok && within:
		o.Succeeded++
		o.SuccessE2E = append(o.SuccessE2E, e2eMS)
		if inPlan {
			o.InPlan++
		}
	case ok:
		o.OverBudget++
		o.GaveUp++
	case status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable:
		o.GaveUp++
		if !within {
			o.OverBudget++
		}
	}
}

// newRequest is arrival seq's request, built as http.NewRequestWithContext
// builds it (a body that GetBody replays) without parsing the client's
// URL again for every call.
func (c *labClient) newRequest(ctx context.Context, seq int, body *labBody) (*http.Request, error) {
	b := body.of(seq)
	u := *c.target
	h := make(http.Header, 3)
	h["Content-Type"], h["Api-Key"] = jsonType, c.keyValue
	if c.spec.SDK {
		h[admission.SDKRetryHeader] = zeroRetries
	}
	// A value, not a pointer: WithContext copies it into the request
	// returned, so it is allocated once, not twice.
	req := http.Request{Method: http.MethodPost, URL: &u, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1, Header: h, Host: u.Host,
		Body: newBodyReader(b), ContentLength: int64(len(b)),
		GetBody: func() (io.ReadCloser, error) { return newBodyReader(b), nil }}
	return req.WithContext(ctx), nil
}

// bodyReader is a request's body, read once: io.NopCloser(bytes.NewReader(b))
// in one allocation (every attempt takes one).
type bodyReader struct{ bytes.Reader }

func newBodyReader(b []byte) *bodyReader {
	r := &bodyReader{}
	r.Reset(b)
	return r
}

func (*bodyReader) Close() error { return nil }

// The header values every request of the lab shares (a header's values
// are replaced, never written in place).
var (
	jsonType    = []string{"application/json"}
	zeroRetries = []string{"0"}
)

// labBody makes the lab's request bodies: a chat completion unique per
// arrival (the witness tells requests apart by their body), whose prompt
// size travels beside it (sim.WithPromptTokens) instead of in it. The
// simulator takes a count so given instead of counting the body, and a
// body with no system message parses to the same request whatever its
// text's length: a short body costs the simulator no scan of a 4 KB
// prompt on every attempt (a quarter of the lab's time when the prompt
// was written out) and changes no decision.
type labBody struct {
	prompt    int // tokens, as the simulator counts them
	maxTokens int
	sizes     []requestSize // each request's, when given
}

// requestSize is a request's size: its prompt and its max_tokens, in tokens.
type requestSize struct{ Prompt, MaxTokens int }

// newLabBody is the body of a prompt of about promptTokens tokens (or of
// each request's size, when sizes are given).
func newLabBody(promptTokens, maxTokens int, sizes []requestSize) *labBody {
	return &labBody{prompt: countedPrompt(promptTokens), maxTokens: maxTokens, sizes: sizes}
}

// countedPrompt is the count the simulator gave the lab's written-out
// prompt of about p tokens ("lab 00000000 " and "sim " a token, four
// characters a token), kept so that a lab's figures do not move with how
// its bodies are written.
func countedPrompt(p int) int {
	filler := 4 * max(p-3, 1)
	return (len("lab 00000000 ") + filler + 3) / 4
}

// tokens is request seq's prompt in tokens.
func (b *labBody) tokens(seq int) int {
	if len(b.sizes) > 0 {
		return countedPrompt(b.sizes[seq%len(b.sizes)].Prompt)
	}
	return b.prompt
}

func (b *labBody) of(seq int) []byte {
	m := b.maxTokens
	if len(b.sizes) > 0 {
		m = b.sizes[seq%len(b.sizes)].MaxTokens
	}
	if seq < 0 || seq > 99999999 {
		return fmt.Appendf(nil, `{"messages":[{"role":"user","content":"lab %08d"}],"max_tokens":%d}`, seq, m)
	}
	// The same bytes as the Appendf above, without fmt: a body per attempt.
	out := make([]byte, 0, 80)
	out = append(out, `{"messages":[{"role":"user","content":"lab `...)
	var d [8]byte
	for i, v := 7, seq; i >= 0; i, v = i-1, v/10 {
		d[i] = byte('0' + v%10)
	}
	out = append(out, d[:]...)
	out = append(out, `"}],"max_tokens":`...)
	return append(strconv.AppendInt(out, int64(m), 10), '}')
}

// toStandard is the fallback: the same request to the standard
// deployment, on the simulator's Azure route.
func toStandard(from, to string) func(*http.Request) (*http.Request, error) {
	return func(r *http.Request) (*http.Request, error) {
		u := *r.URL
		u.Path = strings.Replace(u.Path, "/deployments/"+from+"/", "/deployments/"+to+"/", 1)
		out := r.Clone(r.Context())
		out.URL = &u
		return out, nil
	}
}

// seededRand is a seeded source of [0, 1). The loop runs one goroutine
// at a time, so it needs no lock.
func seededRand(seed uint64) func() float64 {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	return r.Float64
}

// lockedRand is seededRand for a client whose requests run at once on
// the wall clock (a named run): its sends share the source under a lock.
func lockedRand(seed uint64) func() float64 {
	next := seededRand(seed)
	var mu sync.Mutex
	return func() float64 {
		mu.Lock()
		defer mu.Unlock()
		return next()
	}
}
