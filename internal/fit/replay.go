package fit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/vrun"
	"github.com/ptuprobe/ptuprobe/retryafter"
	"github.com/ptuprobe/ptuprobe/sim"
)

// epoch is the virtual clock's start before the phase: a fixed instant
// on a whole minute, so a replay is a function of its settings alone and
// the phase alone says where the run begins in the limiter's windows.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// agreementBin is the resolution at which refusals are compared: which
// sends of one second of a plan were refused is decided, under overload,
// by the completion lengths drawn (one more admitted here, one fewer
// there), so the twin is asked to refuse as many as were refused in each
// second, not the very same sends.
const agreementBin = time.Second

// replayKey is the one key every replayed send carries: a recorded run is
// one client's traffic.
const replayKey = "fit-replay"

// replayHeader is every replayed send's header, shared: the simulator
// only reads a request's header, and a map per send was 7% of a fit.
var replayHeader = http.Header{"Content-Type": {"application/json"}, "Api-Key": {replayKey}}

// answer is what the twin answered one send: refused (429) or not, and
// a refusal's advised wait in ms (-1 when it advised none it could use).
type answer struct {
	refused bool
	wait    float64
}

// replayer sends a workload to fresh simulators, on a virtual clock, in
// process (internal/vrun): the same sends for every candidate setting.
type replayer struct {
	runs  [][][]int // run → plan → indexes into sends
	sends []send
	// ctxs are each send's request context: its prompt's tokens and an
	// admitted send's completion (sim.WithPromptTokens,
	// sim.WithCompletionTokens), made once for every replay (two per send
	// per replay were a sixth of a fit's allocations). The simulator reads
	// their values alone: on the virtual clock a request waits in the
	// run's Sleep, which the replay's context ends (vrun's Play), not the
	// request's.
	ctxs   []context.Context
	bins   []int             // each send's second of its plan (agreementBin), numbered
	bodies map[[2]int][]byte // one body per (prompt, max_tokens): the model reads nothing else
	target *url.URL
}

func newReplayer(s *workload) *replayer {
	r := &replayer{bodies: map[[2]int][]byte{}}
	bins := map[[3]int]int{}
	for ri, run := range s.Runs {
		var plans [][]int
		for pi, p := range run.Plans {
			var idx []int
			for _, snd := range p.Sends {
				idx = append(idx, len(r.sends))
				r.sends = append(r.sends, snd)
				r.ctxs = append(r.ctxs, sim.WithCompletionTokens(sim.WithPromptTokens(context.Background(), snd.PromptTokens), snd.completion))
				k := [3]int{ri, pi, int(snd.At / agreementBin)}
				if _, ok := bins[k]; !ok {
					bins[k] = len(bins)
				}
				r.bins = append(r.bins, bins[k])
				if b := [2]int{snd.PromptTokens, snd.MaxTokens}; r.bodies[b] == nil {
					r.bodies[b] = body(snd.PromptTokens, snd.MaxTokens)
				}
			}
			plans = append(plans, idx)
		}
		r.runs = append(r.runs, plans)
	}
	r.target = &url.URL{Scheme: "http", Host: "fit.invalid", Path: "/openai/deployments/" + sim.DefaultDeployment + "/chat/completions", RawQuery: "api-version=2024-10-21"}
	return r
}

// body is a chat completion asking for maxTokens whose text names its
// prompt's tokens (prompt): the simulator takes the count from the
// request's context (sim.WithPromptTokens, send) and does not count the
// body, and reads nothing else of it but max_tokens and its digest
// (which tells a retry of one body from another send): a body of a few
// bytes is one the simulator reads, copies and hashes in a few
// nanoseconds, where one of the prompt's length in characters (four a
// token: 4 KB for the main job's 1,007 tokens) was some 8% of a fit. Two
// sends of one prompt and max_tokens carry one body, two others two.
func body(prompt, maxTokens int) []byte {
	return fmt.Appendf(nil, `{"messages":[{"role":"user","content":"p%d"}],"max_tokens":%d}`, prompt, maxTokens)
}

// replay sends every send to a simulator of cfg, a fresh one per run,
// the run's clock started phase into the epoch's minute, and returns what
// each send was answered (indexed as r.sends).
func (r *replayer) replay(ctx context.Context, cfg sim.Config, phase time.Duration) ([]answer, error) {
	out, _, err := r.replayUntil(ctx, cfg, phase, nil)
	return out, err
}

// offCount follows a replay's disagreement as its answers come: a
// second's (agreementBin's) recorded 429s less the twin's, over the
// fitted sends, counted once every fitted send of that second is
// answered. off only grows, and at the end it is compare's: the
// agreement's 1 − off/fitted.
type offCount struct {
	left []int // fitted sends of each bin not yet answered
	diff []int // each bin's recorded 429s − the twin's so far
	off  int
	// stop says, of off so far, that the replay can end: the point
	// cannot be what its caller looks for (replayUntil).
	stop    func(off int) bool
	stopped bool
	cancel  context.CancelFunc
	held    map[string]bool
}

// newOffCount counts over the sends not in held groups.
func (r *replayer) newOffCount(held map[string]bool, stop func(off int) bool) *offCount {
	o := &offCount{left: make([]int, len(r.bins)), diff: make([]int, len(r.bins)), stop: stop, held: held}
	for i, b := range r.bins {
		if !held[r.sends[i].Group] {
			o.left[b]++
		}
	}
	return o
}

// answered counts send i's answer a. The run's goroutines take turns on
// its clock (vrun), so the count needs no lock.
func (o *offCount) answered(r *replayer, held map[string]bool, i int, a answer) {
	if o.stopped || held[r.sends[i].Group] {
		return
	}
	b := r.bins[i]
	o.diff[b] += b01(r.sends[i].Refused) - b01(a.refused)
	if o.left[b]--; o.left[b] == 0 {
		o.off += absInt(o.diff[b])
		if o.stop(o.off) {
			o.stopped = true
			o.cancel()
		}
	}
}

// replayUntil is replay, ended early (done false, no answers) once
// count, when not nil, says stop: the rest of the replay could not
// bring the disagreement down.
func (r *replayer) replayUntil(ctx context.Context, cfg sim.Config, phase time.Duration, count *offCount) (out []answer, done bool, err error) {
	out = make([]answer, len(r.sends))
	if count != nil {
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		count.cancel = cancel
	}
	for _, plans := range r.runs {
		if err := ctx.Err(); err != nil { // a cancel stops between runs
			if count != nil && count.stopped {
				return nil, false, nil
			}
			return nil, false, err
		}
		if err := r.replayRun(ctx, cfg, phase, plans, out, count); err != nil {
			if count != nil && count.stopped {
				return nil, false, nil
			}
			return nil, false, err
		}
	}
	return out, true, nil
}

func (r *replayer) replayRun(ctx context.Context, cfg sim.Config, phase time.Duration, plans [][]int, out []answer, count *offCount) error {
	run, err := vrun.New(cfg, vrun.Options{Start: epoch.Add(phase), BodyOf: refusal}) // only a refusal's body is read
	if err != nil {
		return err
	}
	// One buffer for the run's refusals' bodies: its sends take turns
	// on its clock, and each body is read before the next send's.
	var buf refusalBody
	var start func(k int)
	start = func(k int) {
		at, pending := run.Now(), len(plans[k])
		for _, i := range plans[k] {
			run.Go(at.Add(r.sends[i].At), func() {
				out[i] = r.send(run, i, &buf)
				if count != nil {
					count.answered(r, count.held, i, out[i])
				}
				if pending--; pending == 0 && k+1 < len(plans) {
					start(k + 1) // the next plan starts once this one is answered
				}
			})
		}
	}
	if len(plans) > 0 {
		start(0)
	}
	return run.Play(ctx)
}

// refusal says whether status is a 429's.
func refusal(status int) bool { return status == http.StatusTooManyRequests }

// refusalBody reads a run's refusals' bodies, one at a time, into one
// buffer (io.ReadAll's buffer and a LimitReader per refusal were 8% of
// what a fit allocated).
type refusalBody struct {
	buf bytes.Buffer
	lim io.LimitedReader
}

// read reads body, up to retryafter.MaxBody; the bytes are valid until
// the next read.
func (rb *refusalBody) read(body io.Reader) []byte {
	rb.buf.Reset()
	rb.lim = io.LimitedReader{R: body, N: retryafter.MaxBody}
	_, _ = rb.buf.ReadFrom(&rb.lim) // in memory: it does not fail
	rb.lim.R = nil
	return rb.buf.Bytes()
}

// sendBody is a send's body: its bytes and a Close that does nothing, one
// allocation (io.NopCloser of a bytes.Reader was two).
type sendBody struct{ bytes.Reader }

func (*sendBody) Close() error { return nil }

// send sends r.sends[i] through the run's transport and reads the answer
// as a client reads it (retryafter, every dialect), a refusal's body
// through rb.
func (r *replayer) send(run *vrun.Run, i int, rb *refusalBody) answer {
	s := r.sends[i]
	b := r.bodies[[2]int{s.PromptTokens, s.MaxTokens}]
	body := new(sendBody)
	body.Reset(b)
	req := (&http.Request{
		Method: http.MethodPost, URL: r.target, Host: r.target.Host, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        replayHeader,
		Body:          body,
		ContentLength: int64(len(b)),
	}).WithContext(r.ctxs[i]) // the body's count, and an admitted send's completion, travel with it
	resp, err := run.Transport.RoundTrip(req)
	if err != nil {
		return answer{wait: -1}
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests {
		return answer{wait: -1}
	}
	w := retryafter.FromResponse(resp.StatusCode, resp.Header, rb.read(resp.Body), run.Now())
	if !w.Wait.Usable() {
		return answer{refused: true, wait: -1}
	}
	return answer{refused: true, wait: w.Wait.MS}
}
