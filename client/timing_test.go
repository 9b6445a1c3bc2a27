package client

import (
	"context"
	"fmt"
	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/memnet"
	"github.com/ptuprobe/ptuprobe/results"
)

// piece is a part of a scripted stream: written and flushed after a wait.
type piece struct {
	after time.Duration
	text  string
}

// prelude is what may come before a stream's first data, cut across
// reads: a keep-alive comment, events without data or with empty data,
// other fields, a comment that holds "data: x" cut in two, the [DONE]
// that ends an OpenAI stream, then the first data line's field name in
// two reads. It spans 10 ms and holds no token.
var prelude = []piece{
	{2 * time.Millisecond, ": keep-alive\n\n"},
	{time.Millisecond, "event: ping\n\n"},
	{time.Millisecond, "data:\n\n"},
	{time.Millisecond, "data:  \t\r\n\r\n"},
	{time.Millisecond, "id: 7\rretry: 1000\r\r: da"},
	{time.Millisecond, "ta: x\n\n"},
	{time.Millisecond, "data: [DONE]\n\n"},
	{time.Millisecond, "da"},
	{time.Millisecond, "ta: "},
}

// streamDialect is how each streaming API frames what the timing tests
// send: the events before the first token (none of them a token), a
// token's event (seq numbers it), and the last events with the usage
// (completion: its output count, or -1 for none).
type streamDialect struct {
	name  string
	cfg   Config
	lead  []string
	token func(seq int) string
	usage func(completion int) []string
}

var streamDialects = []streamDialect{
	chatDialectTest("azure", Config{API: APIAzure, Endpoint: "http://sim.invalid", Deployment: "d"},
		// Azure's prompt-filter chunk comes first.
		`{"choices":[],"created":0,"id":"","model":"","object":"","prompt_filter_results":[{"prompt_index":0,"content_filter_results":{"hate":{"filtered":false,"severity":"safe"}}}]}`),
	chatDialectTest("openai", Config{API: APIOpenAI, URL: "http://sim.invalid/v1/chat/completions"}),
	chatDialectTest("raw", Config{API: APIRaw, URL: "http://sim.invalid/v1/chat/completions", Body: []byte(`{"stream":true}`)}),
	{
		name: "anthropic", cfg: Config{API: APIAnthropic, URL: "http://sim.invalid/v1/messages", Model: "m"},
		lead: []string{
			"event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"content\":[],\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}",
			"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}",
			"event: ping\ndata: {\"type\": \"ping\"}",
		},
		token: func(i int) string {
			return fmt.Sprintf("event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" w%d\"}}", i)
		},
		usage: func(n int) []string {
			u := ""
			if n >= 0 {
				u = fmt.Sprintf(`,"usage":{"output_tokens":%d}`, n)
			}
			return []string{"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}",
				"event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"}" + u + "}",
				"event: message_stop\ndata: {\"type\":\"message_stop\"}"}
		},
	},
	{
		name: "responses", cfg: Config{API: APIResponses, URL: "http://sim.invalid/v1/responses", Model: "m"},
		lead: []string{
			"event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"output\":[],\"usage\":null}}",
			"event: response.in_progress\ndata: {\"type\":\"response.in_progress\",\"response\":{\"id\":\"r\",\"status\":\"in_progress\",\"usage\":null}}",
			"event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"message\",\"content\":[]}}",
			"event: response.content_part.added\ndata: {\"type\":\"response.content_part.added\",\"part\":{\"type\":\"output_text\",\"text\":\"\"}}",
		},
		token: func(i int) string {
			return fmt.Sprintf("event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"item_id\":\"m\",\"output_index\":0,\"content_index\":0,\"delta\":\" w%d\"}", i)
		},
		usage: func(n int) []string {
			u := "null"
			if n >= 0 {
				u = fmt.Sprintf(`{"input_tokens":5,"output_tokens":%d}`, n)
			}
			return []string{"event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\",\"text\":\"w\"}",
				"event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"id\":\"r\",\"status\":\"completed\",\"usage\":" + u + "}}"}
		},
	},
	{
		name: "gemini", cfg: Config{API: APIGemini, URL: "http://sim.invalid", Model: "m"},
		lead: []string{
			// A chunk with a candidate and no text yet, then one of usage alone.
			`data: {"candidates":[{"content":{"role":"model","parts":[{"text":""}]}}]}`,
			`data: {"usageMetadata":{"promptTokenCount":5}}`,
		},
		token: func(i int) string {
			return fmt.Sprintf(`data: {"candidates":[{"content":{"role":"model","parts":[{"text":" w%d"}]},"index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":%d}}`, i, i+1)
		},
		usage: func(n int) []string {
			if n < 0 {
				return []string{`data: {"candidates":[{"finishReason":"STOP","index":0}]}`}
			}
			return []string{fmt.Sprintf(`data: {"candidates":[{"content":{"role":"model","parts":[]},"finishReason":"STOP","index":0}],"usageMetadata":{"promptTokenCount":5,"candidatesTokenCount":%d}}`, n)}
		},
	},
}

// chatDialectTest is a chat completion API's stream (OpenAI's, Azure's),
// with extra events (Azure's prompt filter) before its role-only chunk.
func chatDialectTest(name string, cfg Config, extra ...string) streamDialect {
	var lead []string
	for _, e := range extra {
		lead = append(lead, "data: "+e)
	}
	lead = append(lead, `data: {"id":"c","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}],"usage":null}`)
	return streamDialect{
		name: name, cfg: cfg, lead: lead,
		token: func(i int) string {
			return fmt.Sprintf(`data: {"id":"c","choices":[{"index":0,"delta":{"content":" w%d"},"finish_reason":null}],"usage":null}`, i)
		},
		usage: func(n int) []string {
			end := []string{`data: {"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop","content_filter_results":{}}],"usage":null}`}
			if n >= 0 {
				end = append(end, fmt.Sprintf(`data: {"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":%d}}`, n))
			}
			return append(end, "data: [DONE]")
		},
	}
}

// script is a stream as pieces: the prelude, the dialect's lead events,
// the first token after first, one token after each of gaps, then its
// usage events (completion: the output count, -1 for none).
func (d streamDialect) script(first time.Duration, gaps []time.Duration, completion int, lineEnd string) []piece {
	var ps []piece
	ps = append(ps, prelude...)
	// The prelude ends with the start of a data line: complete it with
	// an event that is no token.
	ps = append(ps, piece{0, "\"not a token\"" + lineEnd + lineEnd})
	for _, e := range d.lead {
		ps = append(ps, piece{0, strings.ReplaceAll(e, "\n", lineEnd) + lineEnd + lineEnd})
	}
	ps = append(ps, piece{first - 10*time.Millisecond, strings.ReplaceAll(d.token(0), "\n", lineEnd) + lineEnd + lineEnd})
	for i, g := range gaps {
		ps = append(ps, piece{g, ": keep-alive" + lineEnd + lineEnd + strings.ReplaceAll(d.token(i+1), "\n", lineEnd) + lineEnd + lineEnd})
	}
	var tail strings.Builder
	for _, e := range d.usage(completion) {
		tail.WriteString(strings.ReplaceAll(e, "\n", lineEnd) + lineEnd + lineEnd)
	}
	return append(ps, piece{0, tail.String()})
}

// serveScript writes ps, each piece flushed after its wait.
func serveScript(w http.ResponseWriter, req *http.Request, ps []piece) {
	io.Copy(io.Discard, req.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	for _, p := range ps {
		time.Sleep(p.after)
		io.WriteString(w, p.text)
		w.(http.Flusher).Flush()
	}
}

// TestStreamTimingIsTheTokens: in every streaming dialect, on a fake
// clock (a synctest bubble, memnet) where every time is exact, ttft_ms is
// the first content event's time, not a keep-alive comment's, an event
// without data's, a role-only chunk's, Azure's prompt filter's,
// message_start's, response.created's or a usage chunk's, however the
// reads cut them; itl_p50_ms and itl_max_ms are the gaps between the
// content events; tpot_ms is (latency − ttft) / (output tokens − 1), the
// output tokens from the usage or, without one, the content events;
// ttfb_ms is the time to the headers; the usage is still read.
func TestStreamTimingIsTheTokens(t *testing.T) {
	t.Parallel()
	const first = 120 * time.Millisecond
	ms := time.Millisecond
	gaps := []time.Duration{7 * ms, 30 * ms, 12 * ms, 12 * ms, 55 * ms, 9 * ms} // median 12, max 55
	for _, d := range streamDialects {
		for _, c := range []struct {
			completion int
			lineEnd    string
		}{{20, "\n"}, {-1, "\r\n"}} {
			t.Run(fmt.Sprintf("%s/usage%d", d.name, c.completion), func(t *testing.T) {
				t.Parallel()
				r := scriptedAttempt(t, d.cfg, d.script(first, gaps, c.completion, c.lineEnd))
				total := 120.0 + 7 + 30 + 12 + 12 + 55 + 9
				out := 7 // the content events
				if c.completion >= 0 {
					out = c.completion
				}
				if d.name == "gemini" && c.completion < 0 {
					out = 7 // each token's chunk carries its running count
				}
				if r.Status != 200 || r.Error != "" || r.TTFBMS != 0 || r.LatencyMS != total {
					t.Fatalf("status %d error %q ttfb %v latency %v; want 200, ttfb 0 (the headers), latency %v", r.Status, r.Error, r.TTFBMS, r.LatencyMS, total)
				}
				if r.TTFTMS != 120 || math.Abs(r.ITLP50MS-12) > 0.5 || r.ITLMaxMS != 55 || math.Abs(r.TPOTMS-(total-120)/float64(out-1)) > 1e-9 {
					t.Fatalf("ttft %v itl p50 %v max %v tpot %v; want 120, 12, 55, %v", r.TTFTMS, r.ITLP50MS, r.ITLMaxMS, r.TPOTMS, (total-120)/float64(out-1))
				}
				if d.name != "raw" && (c.completion >= 0 || d.name == "gemini" || d.name == "anthropic") && r.PromptTokens != 5 {
					t.Errorf("prompt tokens %d, want 5", r.PromptTokens)
				}
			})
		}
	}
	// One token: no gap, no time per output token; no token: no timing.
	for _, c := range []struct {
		name  string
		gaps  []time.Duration
		usage int
		ttft  float64
	}{{"one", nil, 1, 120}, {"usage says one", nil, -1, 120}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			d := streamDialects[1]
			r := scriptedAttempt(t, d.cfg, d.script(first, c.gaps, c.usage, "\n"))
			if r.TTFTMS != c.ttft || r.ITLP50MS != results.None || r.ITLMaxMS != results.None || r.TPOTMS != results.None {
				t.Fatalf("ttft %v itl %v/%v tpot %v; want %v and the rest empty", r.TTFTMS, r.ITLP50MS, r.ITLMaxMS, r.TPOTMS, c.ttft)
			}
		})
	}
	t.Run("no token", func(t *testing.T) {
		t.Parallel()
		d := streamDialects[1]
		ps := append(append([]piece{}, prelude...), piece{300 * ms, "\"x\"\n\n" + strings.Join(d.lead, "\n\n") + "\n\ndata: [DONE]\n\n"})
		r := scriptedAttempt(t, d.cfg, ps)
		if r.Status != 200 || r.TTFBMS != 0 || r.TTFTMS != results.None || r.ITLP50MS != results.None || r.TPOTMS != results.None {
			t.Fatalf("%+v; want ttfb 0 and no token timing", r)
		}
	})
	t.Run("not streamed", func(t *testing.T) {
		t.Parallel()
		cfg := streamDialects[1].cfg
		cfg.Stream = false
		r := scriptedAttempt(t, cfg, []piece{{50 * ms, `{"choices":[{"message":{"content":"hi"}}],"usage":{"prompt_tokens":5,"completion_tokens":9}}`}})
		if r.Status != 200 || r.CompletionTokens != 9 || r.TTFTMS != results.None || r.ITLMaxMS != results.None || r.TPOTMS != results.None {
			t.Fatalf("%+v; want no token timing", r)
		}
	})
}

// scriptedAttempt is one attempt against a server that writes ps, in a
// synctest bubble over memnet (cfg.Stream is set unless cfg's API is
// raw with a body that does not ask for it).
func scriptedAttempt(t *testing.T, cfg Config, ps []piece) results.Record {
	t.Helper()
	var r results.Record
	synctest.Test(t, func(t *testing.T) {
		ln := memnet.Listen()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { serveScript(w, req, ps) })}
		go srv.Serve(ln)
		defer srv.Close()
		if cfg.API != APIRaw {
			cfg.PromptTokens, cfg.MaxTokens = 5, 1
		}
		if !strings.Contains(ps[len(ps)-1].text, `"message"`) {
			cfg.Stream = true
		}
		cfg.DialContext = ln.DialContext
		tg, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer tg.Close()
		r = results.Blank()
		tg.attempt(context.Background(), 0, &r)
	})
	return r
}

// TestStreamTimingOnLoopback is the measure of issue 37 on a real
// loopback server whose chunk times are the ground truth: a keep-alive
// comment and a role-only chunk first, the first token at a fixed delay,
// uneven gaps, every 5th request refused (429). Per answer, ttft_ms,
// itl_p50_ms, itl_max_ms and tpot_ms must be within 3 ms of the server's
// own times (each taken when its write was flushed, from the request's
// arrival) for at least 95% of the answers, in every streaming dialect;
// the refused ones have none. An answer whose server's own sleeps ended
// over 3 ms late, or during which the process stalled over 2 ms
// (testkit.Stalls: a loaded machine woke nobody on time), is not judged
// (no one could time it), and with half of them so the test is skipped. It runs alone (not in parallel with the
// package's other tests), its dialects side by side: a reader delayed by
// a busy machine reads two events at once, which moves two gaps.
func TestStreamTimingOnLoopback(t *testing.T) {
	const (
		requests = 40
		refuseK  = 5
		first    = 40 * time.Millisecond
		// busy is how late the server's own sleeps may end for its
		// answer to count: a machine that wakes the server later wakes
		// the client's reader late as well, and no reader can time what
		// it was not awake to read (a loaded 2-core machine, load 14,
		// woke both 10–14 ms late).
		busy = 3 * time.Millisecond
	)
	ms := time.Millisecond
	for _, d := range streamDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			var mu sync.Mutex
			truth := map[int][4]float64{}   // by request: ttft, itl p50, itl max, tpot
			disturbed := map[int]bool{}     // the server itself woke late
			spans := map[int][2]time.Time{} // by request: its arrival and its last write
			stalls := testkit.WatchStalls(t)
			var n int
			var tg *Target
			came := make(chan struct{}, requests)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
				body, _ := io.ReadAll(req.Body)
				arrived := time.Now()
				mu.Lock()
				i := n // raw's body is every request's: numbered as they come, one at a time
				n++
				mu.Unlock()
				came <- struct{}{}
				for seq := range requests {
					if d.cfg.API != APIRaw && string(body) == string(tg.Body(seq)) {
						i = seq // a synthetic prompt is its request's own
					}
				}
				if i%refuseK == refuseK-1 {
					w.Header().Set("Retry-After-Ms", "10")
					w.WriteHeader(http.StatusTooManyRequests)
					io.WriteString(w, `{"error":{"code":"429"}}`)
					return
				}
				// Uneven gaps, different per request: 8 to 27 ms. (Gaps
				// of 3 ms failed a few answers at load 14 on 2 cores: a
				// reader that a busy machine wakes late reads two events
				// at once, a gap of 0 as read. Up to 45 ms until round
				// 12: the answers are shorter now, the same 8 ms the
				// least; bench/README.md.)
				var gaps []time.Duration
				for j := range 6 + i%4 {
					gaps = append(gaps, time.Duration(8+(i*7+j*13)%20)*ms)
				}
				ps := d.script(first, gaps, -1, "\n")
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				w.(http.Flusher).Flush()
				var tokens []time.Time
				late := time.Duration(0) // the server's own worst oversleep
				for k, p := range ps {
					slept := time.Now()
					time.Sleep(p.after)
					late = max(late, time.Since(slept)-p.after)
					io.WriteString(w, p.text)
					w.(http.Flusher).Flush()
					if k >= len(prelude)+1+len(d.lead) && k < len(ps)-1 {
						tokens = append(tokens, time.Now())
					}
				}
				end := time.Now()
				var itl []float64
				for k := 1; k < len(tokens); k++ {
					itl = append(itl, msOf(tokens[k].Sub(tokens[k-1])))
				}
				slices.Sort(itl)
				med := (itl[(len(itl)-1)/2] + itl[len(itl)/2]) / 2
				ttft := msOf(tokens[0].Sub(arrived))
				mu.Lock()
				truth[i] = [4]float64{ttft, med, itl[len(itl)-1], (msOf(end.Sub(arrived)) - ttft) / float64(len(tokens)-1)}
				spans[i] = [2]time.Time{arrived, end}
				if late > busy {
					disturbed[i] = true
				}
				mu.Unlock()
			}))
			defer srv.Close()
			cfg := d.cfg
			if cfg.API == APIAzure {
				cfg.Endpoint = srv.URL
			} else {
				cfg.URL = srv.URL + strings.TrimPrefix(cfg.URL, "http://sim.invalid")
			}
			if cfg.API != APIRaw {
				cfg.PromptTokens, cfg.MaxTokens = 5, 1
			}
			cfg.Stream = true
			var err error
			tg, err = New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			rows := make([]results.Record, requests)
			var wg sync.WaitGroup
			for i := range rows {
				wg.Add(1)
				go func() {
					defer wg.Done()
					rows[i] = results.Blank()
					rows[i].Seq = i
					tg.attempt(context.Background(), i, &rows[i])
				}()
				<-came             // the next is sent once this one is in: arrival order is seq order
				time.Sleep(6 * ms) // some 30 answers open at once
			}
			wg.Wait()
			// The server knew each request by its prompt, raw's by its
			// arrival.
			var answers []results.Record
			for _, r := range rows {
				if r.Status == http.StatusTooManyRequests {
					if r.TTFTMS != results.None || r.TPOTMS != results.None || r.ITLP50MS != results.None {
						t.Errorf("a refusal has token timing: %+v", r)
					}
					continue
				}
				answers = append(answers, r)
			}
			answered, within, judged, stalled := len(answers), 0, 0, 0
			var worst []string
			for _, r := range answers {
				tr, ok := truth[r.Seq]
				if !ok {
					t.Fatalf("request %d: no answer of the server's", r.Seq)
				}
				// Nor is one during which this process could not run on
				// time (stalls), which delays the client's reads where
				// the server's writes were on time: the reader's last
				// read may come some milliseconds after the last write.
				// A stall of 2 ms and the reader's own millisecond can
				// put a read 3 ms late: one failed at load 11 when only
				// stalls over 3 ms were not judged (1 of 48 runs of a
				// dialect; 4 of 48 before any).
				if sp := spans[r.Seq]; disturbed[r.Seq] || stalls.Worst(sp[0], sp[1].Add(20*ms)) > busy-ms {
					if !disturbed[r.Seq] {
						stalled++
					}
					continue
				}
				judged++
				dist := 0.0
				for k, v := range []float64{r.TTFTMS, r.ITLP50MS, r.ITLMaxMS, r.TPOTMS} {
					dist = max(dist, math.Abs(v-tr[k]))
				}
				if dist <= 3 {
					within++
				} else {
					worst = append(worst, fmt.Sprintf("ttft %.1f itl %.1f/%.1f tpot %.2f, the server's %.1f %.1f/%.1f %.2f",
						r.TTFTMS, r.ITLP50MS, r.ITLMaxMS, r.TPOTMS, tr[0], tr[1], tr[2], tr[3]))
				}
			}
			if answered != requests-requests/refuseK {
				t.Fatalf("%d answers, want %d", answered, requests-requests/refuseK)
			}
			if judged < answered/2 {
				t.Skipf("the machine is too busy to judge: the server's own sleeps ended over %v late for %d of %d answers, the process stalled during %d more", busy, answered-judged-stalled, answered, stalled)
			}
			t.Logf("%d of %d answers within 3 ms of the server's times (%d not judged: the server woke late for %d, the process stalled during %d)", within, judged, answered-judged, answered-judged-stalled, stalled)
			// Under the race detector the client's reader runs some times
			// slower than the server's writer: its reads end late by what
			// no server-side lateness shows (itl max 4.3 ms over the
			// server's, CI at 4e33fa3); -race runs the answers for their
			// races, go test ./... judges their timing.
			if testkit.Race {
				return
			}
			// A reader that times the wrong thing (the role chunk for the
			// first token, two events read as one) is off on every answer;
			// one answer off in a sample of 18 judged is a load's outlier
			// (17 of 18 failed at load 3.6 when 95% was asked of any
			// sample), so one miss is allowed however few are judged.
			if misses := judged - within; misses > max(1, judged/20) {
				t.Fatalf("%d of %d answers within 3 ms of the server's times (want ≥ 95%%, or all but one; %d more answers, whose server woke late, not judged): %s", within, judged, answered-judged, strings.Join(worst, "; "))
			}
		})
	}
}

func msOf(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// TestFewGapsAreTheHistogram: an answer's timing keeps its first gaps in
// itself and moves them into a gapHist past fewGaps; either way its
// itl_p50_ms and itl_max_ms are those of a gapHist given every gap, for
// answers of 1 to 60 gaps of every scale (fine, coarse and beyond).
func TestFewGapsAreTheHistogram(t *testing.T) {
	t.Parallel()
	scales := []time.Duration{time.Millisecond, 37 * time.Millisecond, 900 * time.Millisecond}
	for n := 1; n <= 60; n++ {
		for _, scale := range scales {
			gaps := make([]time.Duration, n)
			for i := range gaps {
				gaps[i] = time.Duration((i*7919+n*104729)%97) * scale / 10
			}
			var tm streamTiming
			at := time.Unix(0, 0)
			tm.readAt = at
			tm.content()
			var ref gapHist
			for _, g := range gaps {
				at = at.Add(g)
				tm.readAt = at
				tm.content()
				ref.add(g)
			}
			if got := tm.gapCount(); got != n {
				t.Fatalf("%d gaps of scale %v: %d held", n, scale, got)
			}
			r := results.Blank()
			tm.fill(time.Unix(0, 0), &r)
			if want := ms(ref.median()); r.ITLP50MS != want {
				t.Errorf("%d gaps of scale %v: itl_p50_ms %v, the histogram's %v", n, scale, r.ITLP50MS, want)
			}
			if want := ms(ref.max); r.ITLMaxMS != want {
				t.Errorf("%d gaps of scale %v: itl_max_ms %v, the histogram's %v", n, scale, r.ITLMaxMS, want)
			}
		}
	}
}
