package vrun

import (
	"context"
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/inproc"
	"github.com/ptuprobe/ptuprobe/internal/vclock"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Run is one run of planned traffic: a fresh simulator on a virtual
// clock. Its goroutines (those Go and Plan start) run one at a time, in
// the order of their times; each may block only in Sleep (or in a
// request through Transport, whose latency is a Sleep on this clock).
// Run is the admission library's and the simulator's Clock.
type Run struct {
	loop *vclock.Loop
	// Server is the run's simulator.
	Server *sim.Server
	// Transport serves a request with Server on the calling goroutine, in
	// memory.
	Transport http.RoundTripper
}

// Options are a Run's settings besides the simulator's.
type Options struct {
	// Start is where the virtual clock starts: a fixed instant, so a run
	// is a function of its settings alone.
	Start time.Time
	// BodyOf, when set, says which statuses' bodies the Transport keeps
	// (the rest are dropped as written): a caller that reads only
	// refusals buffers no completion.
	BodyOf func(status int) bool
}

// New starts a fresh simulator of cfg (its Clock and TimeScale are the
// run's) on a virtual clock at o.Start.
func New(cfg sim.Config, o Options) (*Run, error) {
	loop := vclock.New(o.Start)
	cfg.Clock, cfg.TimeScale = loop, 1
	server, err := sim.New(cfg)
	if err != nil {
		return nil, err
	}
	return &Run{loop: loop, Server: server, Transport: inproc.Transport{Handler: chunked{server}, BodyOf: o.BodyOf}}, nil
}

// chunksKey carries WithChunks' function in a request's context.
type chunksKey struct{}

// WithChunks has f see every write of the answer to a request made with
// ctx, as the simulator writes it: on the request's goroutine, at the
// virtual time of the write (Now), so a streamed answer's events are seen
// as they would arrive (the Transport hands the body over whole, once the
// answer is complete). p is valid only during the call.
func WithChunks(ctx context.Context, f func(p []byte)) context.Context {
	return context.WithValue(ctx, chunksKey{}, f)
}

// chunked serves with h, showing the writes to WithChunks' function.
type chunked struct{ h http.Handler }

func (c chunked) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if f, ok := r.Context().Value(chunksKey{}).(func([]byte)); ok {
		w = chunkWriter{w, f}
	}
	c.h.ServeHTTP(w, r)
}

type chunkWriter struct {
	http.ResponseWriter
	f func([]byte)
}

func (c chunkWriter) Write(p []byte) (int, error) {
	c.f(p)
	return c.ResponseWriter.Write(p)
}

func (c chunkWriter) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Now is the virtual clock's time.
func (r *Run) Now() time.Time { return r.loop.Now() }

// Sleep waits d on the virtual clock (ctx's end ends it, with its error).
func (r *Run) Sleep(ctx context.Context, d time.Duration) error { return r.loop.Sleep(ctx, d) }

// Go starts f at at on the virtual clock.
func (r *Run) Go(at time.Time, f func()) { r.loop.Go(at, f) }

// Plan starts send(i) at start + offsets[i], for every i: a plan's
// arrivals, each its own goroutine on the clock, in the offsets' order at
// one instant.
func (r *Run) Plan(start time.Time, offsets []time.Duration, send func(i int)) {
	for i, at := range offsets {
		r.loop.Go(start.Add(at), func() { send(i) })
	}
}

// Play runs every goroutine started until none is left, or until ctx
// ends (then ctx's error: the run is incomplete).
func (r *Run) Play(ctx context.Context) error { return r.loop.Run(ctx) }
