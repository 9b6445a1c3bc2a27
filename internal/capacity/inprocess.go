package capacity

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/internal/vrun"
	"github.com/ptuprobe/ptuprobe/sim"
)

// epoch is the virtual clock's start: a fixed instant, so a step is a
// function of its settings alone.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// apiVersion is the Azure route's api-version of the requests in process.
const apiVersion = "2024-10-21"

// repeatStride separates the sizes drawn for each repeat of a rate.
const repeatStride = 1 << 20

// InProcess measures each step in process on the virtual clock against a
// fresh simulator of Sim (internal/vrun), its requests streamed and timed
// as the simulator writes each event: the first content event is the time
// to first token, the gaps between content events the inter-token
// latencies. Repeat r of a rate runs the simulator with Seed + r and the
// sizes drawn for it. Deterministic: a function of the settings alone.
type InProcess struct {
	Sim sim.Config
	// Shape is request seq's prompt tokens and max_tokens.
	Shape func(seq int) (prompt, maxTokens int)
}

// Validate checks the simulator speaks the Azure dialect the requests
// in process are written in.
func (p *InProcess) Validate() error {
	if d := p.Sim.Dialect; d != "" && d != sim.DialectAzure && d != sim.DialectIETF {
		return valid.Errorf("Dialect", "must be azure or ietf for a capacity search on the embedded simulator (its requests are Azure chat completions)")
	}
	if p.Shape == nil {
		return valid.Errorf("Shape", "must size the requests")
	}
	return nil
}

// Measure is a Measure of p (for Search).
func (p *InProcess) Measure(ctx context.Context, probe Probe, t *Tally) error {
	cfg := p.Sim
	cfg.Seed += int64(probe.Repeat)
	r, err := vrun.New(cfg, vrun.Options{Start: epoch, BodyOf: func(int) bool { return false }})
	if err != nil {
		return err
	}
	url := "http://capacity.invalid/openai/deployments/" + cfg.Deployment + "/chat/completions?api-version=" + apiVersion
	stopCtx, stop := context.WithCancel(ctx)
	defer stop()
	offsets := make([]time.Duration, t.Planned())
	for i := range offsets {
		offsets[i] = t.Offset(i)
	}
	r.Plan(epoch, offsets, func(seq int) {
		if stopCtx.Err() != nil {
			return // the step is clearly past the capacity: the rest is not sent
		}
		prompt, maxTokens := p.Shape(seq + probe.Repeat*repeatStride)
		o := send(stopCtx, r, url, seq, prompt, maxTokens)
		if stopCtx.Err() == nil && t.Add(o) {
			stop()
		}
	})
	if err := r.Play(ctx); err != nil {
		return err
	}
	return ctx.Err()
}

// send sends request seq streamed and times its events on r's clock.
func send(ctx context.Context, r *vrun.Run, url string, seq, prompt, maxTokens int) Outcome {
	start := r.Now()
	ev := events{now: r.Now, start: start, first: -1}
	ctx = vrun.WithChunks(sim.WithPromptTokens(ctx, prompt), ev.write)
	body := fmt.Appendf(nil, `{"messages":[{"role":"user","content":"capacity %d"}],"max_tokens":%d,"stream":true,"stream_options":{"include_usage":true}}`, seq, maxTokens)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return Outcome{Seq: seq, TTFT: -1, TPOT: -1, ITLMax: -1}
	}
	req.Header.Set("Api-Key", "capacity")
	resp, err := r.Transport.RoundTrip(req)
	o := Outcome{Seq: seq, TTFT: -1, TPOT: -1, ITLMax: -1}
	if err != nil {
		return o
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	o.Status, o.Latency = resp.StatusCode, r.Now().Sub(start)
	if ev.bad {
		o.Status = 0 // a stream not read whole is no answer
	}
	o.TTFT, o.ITLMax, o.Tokens = ev.first, ev.maxGap, ev.tokens
	if ev.count < 2 {
		o.ITLMax = -1
	}
	if ev.first >= 0 && ev.completion > 1 {
		o.TPOT = (o.Latency - ev.first) / time.Duration(ev.completion-1)
	}
	return o
}

// events reads a streamed chat completion as the simulator writes it.
type events struct {
	now        func() time.Time
	start      time.Time
	buf        []byte
	first      time.Duration // the first content event (-1: none)
	last       time.Duration
	maxGap     time.Duration
	count      int
	tokens     int
	completion int
	bad        bool
}

// chunk is what events reads of a chat.completion.chunk.
type chunk struct {
	Choices []struct {
		Delta struct {
			Content string `json:"content"`
		} `json:"delta"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func (e *events) write(p []byte) {
	e.buf = append(e.buf, p...)
	for {
		i := bytes.Index(e.buf, []byte("\n\n"))
		if i < 0 {
			return
		}
		e.event(e.buf[:i])
		e.buf = e.buf[:copy(e.buf, e.buf[i+2:])]
	}
}

func (e *events) event(line []byte) {
	data, ok := bytes.CutPrefix(line, []byte("data: "))
	if !ok || bytes.Equal(data, []byte("[DONE]")) {
		return
	}
	var c chunk
	if json.Unmarshal(data, &c) != nil {
		e.bad = true
		return
	}
	if c.Usage != nil {
		e.tokens, e.completion = c.Usage.PromptTokens+c.Usage.CompletionTokens, c.Usage.CompletionTokens
	}
	for _, ch := range c.Choices {
		if ch.Delta.Content == "" {
			continue
		}
		at := e.now().Sub(e.start)
		if e.count == 0 {
			e.first = at
		} else {
			e.maxGap = max(e.maxGap, at-e.last)
		}
		e.last = at
		e.count++
		break
	}
}
