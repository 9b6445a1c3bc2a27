package sim

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// modelName is what responses report as the model; deployment names are
// never echoed. The anthropic dialect reports claudeModel, gemini
// geminiModel.
const (
	modelName   = "gpt-4o-sim"
	claudeModel = "claude-sim"
)

// messagesModel is the model a messages answer reports.
func (s *Server) messagesModel() string {
	if s.cfg.Dialect == DialectAnthropic {
		return claudeModel
	}
	return modelName
}

// filler is the generated text: "sim " is four characters, one token
// under the simulator's tokenizer, so content length matches usage.
var filler = strings.Repeat("sim ", MaxOutputTokens)

func fillerText(tokens int) string {
	if tokens <= 0 {
		return ""
	}
	return filler[:4*min(tokens, MaxOutputTokens)-1]
}

// streamChunkTokens is how many tokens one server-sent event carries, so
// a long completion is a bounded number of writes.
const streamChunkTokens = 16

var jsonContentType = []string{"application/json"}

// bodyBufs are the buffers a whole (not streamed) completion and a
// PTU refusal are written from, reused: a Write does not keep its bytes
// (io.Writer), and a fit's replays answer millions of sends (a buffer
// per answer was a sixth of what a fit allocated).
var bodyBufs = sync.Pool{New: func() any { return new([]byte) }}

func setInt(h http.Header, key string, v int64) { h[key] = []string{strconv.FormatInt(v, 10)} }

// setInt2 is setInt of two headers, their values in one allocation (each
// slice capped: appending to one does not write the other's).
func setInt2(h http.Header, k1 string, v1 int64, k2 string, v2 int64) {
	vs := []string{strconv.FormatInt(v1, 10), strconv.FormatInt(v2, 10)}
	h[k1], h[k2] = vs[0:1:1], vs[1:2:2]
}

// writeAzureError writes {"error":{"code":…,"message":…}}.
func writeAzureError(w http.ResponseWriter, status int, code, msg string) {
	body, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": msg}})
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

// writeGatewayError writes {"type":"error","error":{"type":…,"message":…}},
// the Messages API's error envelope (the gateway profile's and the
// anthropic dialect's).
func (s *Server) writeGatewayError(w http.ResponseWriter, status int, typ, msg string) {
	type detail struct {
		Type    string `json:"type"`
		Message string `json:"message"`
	}
	body, _ := json.Marshal(struct {
		Type  string `json:"type"`
		Error detail `json:"error"`
	}{"error", detail{typ, msg}})
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(append(body, '\n'))
}

func gatewayErrorType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "authentication_error"
	case http.StatusForbidden:
		return "permission_error"
	case http.StatusNotFound:
		return "not_found_error"
	case http.StatusRequestEntityTooLarge:
		return "request_too_large"
	case http.StatusTooManyRequests:
		return "rate_limit_error"
	case http.StatusServiceUnavailable:
		return "overloaded_error"
	}
	if status >= 500 {
		return "api_error"
	}
	return "invalid_request_error"
}

// write429PTU is the hot path of an overloaded deployment: headers and a
// small body built by appending, no reflection.
func (s *Server) write429PTU(w http.ResponseWriter, o *outcome) {
	what := `the provisioned throughput of this deployment`
	switch {
	case o.direct:
		what = `the rate limit of this standard deployment`
	case o.standard:
		what = `the rate limit of the spillover deployment and the provisioned throughput of this deployment`
	}
	h := w.Header()
	if s.cfg.UtilizationHeader && !o.direct {
		h["Azure-Openai-Deployment-Utilization"] = []string{formatUtil(o.util)}
	}
	if s.cfg.Dialect != DialectAzure {
		s.writeRefusal(w, &o.ans, what)
		return
	}
	writeRetryHeaders(h, &o.ans)
	h["Content-Type"] = jsonContentType
	if o.standard {
		setInt2(h, "X-Ratelimit-Remaining-Requests", o.remReq, "X-Ratelimit-Remaining-Tokens", o.remTok)
	}
	w.WriteHeader(http.StatusTooManyRequests)
	bp := bodyBufs.Get().(*[]byte)
	b := (*bp)[:0]
	b = append(b, `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API have exceeded `...)
	b = append(b, what...)
	if o.ans.retryAfter {
		b = append(b, `. Please retry after `...)
		b = strconv.AppendInt(b, o.ans.retryAfterS(), 10)
		b = append(b, " seconds.\"}}\n"...)
	} else {
		b = append(b, ". Please retry later.\"}}\n"...)
	}
	w.Write(b)
	*bp = b
	bodyBufs.Put(bp)
}

func formatUtil(pct float64) string {
	return strconv.FormatFloat(pct, 'f', 1, 64) + "%"
}

// faultWait is the advised wait the http-date fault carries (model time).
const faultWait = 2 * time.Second

// writeFault answers with an injected fault instead of the model.
func (s *Server) writeFault(w http.ResponseWriter, kind string) {
	h := w.Header()
	switch kind {
	case FaultReset:
		resetConnection(w)
		return
	case Fault503:
		s.writeError(w, http.StatusServiceUnavailable, "ServiceUnavailable", "The service is temporarily unable to process your request. Please try again later.")
		return
	case FaultHTTPDate:
		now := time.Now().UTC().Truncate(time.Second)
		wait := time.Duration(float64(faultWait) / s.cfg.TimeScale)
		at := now.Add(wait).Truncate(time.Second)
		if !at.After(now) {
			at = now.Add(time.Second)
		}
		h.Set("Date", now.Format(http.TimeFormat))
		h.Set("Retry-After", at.Format(http.TimeFormat))
	case FaultGarbage:
		h.Set("Retry-After-Ms", "soon")
		h.Set("Retry-After", "whenever, really")
	case FaultMissing:
	}
	s.writeError(w, http.StatusTooManyRequests, "429", "Too many requests. Please try again later.")
}

// resetConnection closes the client's connection with a TCP RST and no
// response. Where the connection cannot be taken over, net/http's
// ErrAbortHandler still drops it without a response.
func resetConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler)
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// respondCompletion serves an admitted chat completion: it waits the
// model latency, calls done (the estimate correction) when the response
// completes, and writes JSON or server-sent events.
func (s *Server) respondCompletion(w http.ResponseWriter, r *http.Request, req *request, o *outcome, done func()) {
	h := w.Header()
	if s.cfg.UtilizationHeader && s.style.utilization && !o.standard {
		h["Azure-Openai-Deployment-Utilization"] = []string{formatUtil(o.util)}
	}
	ctx := r.Context()
	if !req.Stream {
		if !s.beginWhole(ctx, w, o, done) {
			return
		}
		bp := bodyBufs.Get().(*[]byte)
		b := slices.Grow((*bp)[:0], 512+4*o.completion)
		b = appendChatHead(b, "chat.completion", o)
		b = append(b, `"choices":[{"index":0,"message":{"role":"assistant","content":"`...)
		b = append(b, fillerText(o.completion)...)
		b = append(b, `"},"finish_reason":"`...)
		b = append(b, finishReason(req, o)...)
		b = append(b, `"}],`...)
		b = appendUsage(b, req, o)
		b = append(b, "}\n"...)
		w.Write(b)
		*bp = b
		bodyBufs.Put(bp)
		return
	}
	flush, ok := s.beginStream(ctx, w, o, done, true)
	if !ok {
		return
	}
	event := func(b []byte) {
		w.Write([]byte("data: "))
		w.Write(b)
		w.Write([]byte("\n\n"))
		flush()
	}
	b := appendChatHead(nil, "chat.completion.chunk", o)
	event(append(b, `"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`...))
	if !s.streamText(ctx, o, done, func(text string) {
		b = appendChatHead(b[:0], "chat.completion.chunk", o)
		b = append(b, `"choices":[{"index":0,"delta":{"content":"`...)
		b = append(b, text...)
		b = append(b, `"},"finish_reason":null}]}`...)
		event(b)
	}) {
		return
	}
	done()
	b = appendChatHead(b[:0], "chat.completion.chunk", o)
	b = append(b, `"choices":[{"index":0,"delta":{},"finish_reason":"`...)
	b = append(b, finishReason(req, o)...)
	event(append(b, `"}]}`...))
	if req.IncludeUsage {
		b = appendChatHead(b[:0], "chat.completion.chunk", o)
		b = append(b, `"choices":[],`...)
		b = appendUsage(b, req, o)
		event(append(b, '}'))
	}
	event([]byte("[DONE]"))
}

func finishReason(req *request, o *outcome) string {
	if o.completion >= req.MaxTokens {
		return "length"
	}
	return "stop"
}

func appendChatHead(b []byte, object string, o *outcome) []byte {
	b = append(b, `{"id":"chatcmpl-sim-`...)
	b = strconv.AppendUint(b, o.id, 10)
	b = append(b, `","object":"`...)
	b = append(b, object...)
	b = append(b, `","created":`...)
	b = strconv.AppendInt(b, o.created, 10)
	b = append(b, `,"model":"`+modelName+`",`...)
	return b
}

func appendUsage(b []byte, req *request, o *outcome) []byte {
	b = append(b, `"usage":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, int64(req.PromptTokens), 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, int64(o.completion), 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, int64(req.PromptTokens+o.completion), 10)
	b = append(b, `,"prompt_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(o.cached), 10)
	return append(b, `}}`...)
}

// respondMessage serves an admitted messages call, in the Messages API
// shape (JSON or named server-sent events). Cached prompt tokens are
// reported as cache_read_input_tokens and left out of input_tokens, as
// the Messages API counts them.
func (s *Server) respondMessage(w http.ResponseWriter, r *http.Request, req *request, o *outcome, done func()) {
	ctx := r.Context()
	stop := "end_turn"
	if o.completion >= req.MaxTokens {
		stop = "max_tokens"
	}
	id := "msg_sim_" + strconv.FormatUint(o.id, 10)
	model := s.messagesModel()
	usage := `"usage":{"input_tokens":` + strconv.Itoa(req.PromptTokens-o.cached) +
		`,"cache_creation_input_tokens":0,"cache_read_input_tokens":` + strconv.Itoa(o.cached) + `,"output_tokens":`
	if !req.Stream {
		if !s.beginWhole(ctx, w, o, done) {
			return
		}
		b := make([]byte, 0, 256+4*o.completion)
		b = append(b, `{"id":"`+id+`","type":"message","role":"assistant","model":"`+model+`","content":[{"type":"text","text":"`...)
		b = append(b, fillerText(o.completion)...)
		b = append(b, `"}],"stop_reason":"`+stop+`","stop_sequence":null,`+usage...)
		b = strconv.AppendInt(b, int64(o.completion), 10)
		w.Write(append(b, "}}\n"...))
		return
	}
	flush, ok := s.beginStream(ctx, w, o, done, true)
	if !ok {
		return
	}
	event := func(name, data string) {
		w.Write([]byte("event: " + name + "\ndata: " + data + "\n\n"))
		flush()
	}
	event("message_start", `{"type":"message_start","message":{"id":"`+id+`","type":"message","role":"assistant","model":"`+model+`","content":[],"stop_reason":null,"stop_sequence":null,`+usage+`0}}}`)
	event("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	if !s.streamText(ctx, o, done, func(text string) {
		event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"`+text+`"}}`)
	}) {
		return
	}
	done()
	event("content_block_stop", `{"type":"content_block_stop","index":0}`)
	event("message_delta", `{"type":"message_delta","delta":{"stop_reason":"`+stop+`","stop_sequence":null},"usage":{"output_tokens":`+strconv.Itoa(o.completion)+`}}`)
	event("message_stop", `{"type":"message_stop"}`)
}

// writeImages answers an image generation: no usage, by design of that
// operation, so the gateway keeps its estimate.
func (s *Server) writeImages(w http.ResponseWriter, n int, created int64) {
	w.Header()["Content-Type"] = jsonContentType
	b := append(make([]byte, 0, 64+40*n), `{"created":`...)
	b = strconv.AppendInt(b, created, 10)
	b = append(b, `,"data":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"b64_json":"iVBORw0KGgo="}`...)
	}
	w.Write(append(b, "]}\n"...))
}

// streamText is decode handing emit each chunk's text alone.
func (s *Server) streamText(ctx context.Context, o *outcome, done func(), emit func(text string)) bool {
	return s.decode(ctx, o, done, func(text string, _ int, _ bool) { emit(text) })
}

// beginWhole starts an answer sent whole, not streamed: it waits the
// model latency of o's completion, calls done (the answer is complete,
// or the client went away during the wait: then it returns false) and
// names the JSON body to come.
func (s *Server) beginWhole(ctx context.Context, w http.ResponseWriter, o *outcome, done func()) bool {
	err := s.clock.Sleep(ctx, latency(o))
	done()
	if err != nil {
		return false
	}
	w.Header()["Content-Type"] = jsonContentType
	return true
}

// beginStream waits o's time to first token, then sends the headers of
// a stream: server-sent events (sse), else a JSON body written in parts
// (Gemini's streamed array). It returns a flush for each event, or false
// (after calling done) when the client went away during the wait.
func (s *Server) beginStream(ctx context.Context, w http.ResponseWriter, o *outcome, done func(), sse bool) (func(), bool) {
	if s.clock.Sleep(ctx, o.ttft) != nil {
		done()
		return nil, false
	}
	h := w.Header()
	if sse {
		h["Content-Type"] = []string{"text/event-stream"}
		h["Cache-Control"] = []string{"no-cache"}
	} else {
		h["Content-Type"] = jsonContentType
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	return func() {
		if flusher != nil {
			flusher.Flush()
		}
	}, true
}
