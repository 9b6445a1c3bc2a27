package sim

import (
	"net/http"
	"strconv"
)

// respondResponse serves an admitted Responses API call (POST
// /v1/responses; Azure's /openai/v1/responses): a response object with
// one output message, or with stream the events response.created,
// response.output_text.delta… and response.completed, which carries the
// usage (platform.openai.com/docs/api-reference/responses). Cached prompt
// tokens are input_tokens_details.cached_tokens, within input_tokens.
func (s *Server) respondResponse(w http.ResponseWriter, r *http.Request, req *request, o *outcome, done func()) {
	ctx := r.Context()
	if !req.Stream {
		if !s.beginWhole(ctx, w, o, done) {
			return
		}
		b := appendResponse(make([]byte, 0, 512+4*o.completion), req, o, true)
		w.Write(append(b, '\n'))
		return
	}
	flush, ok := s.beginStream(ctx, w, o, done, true)
	if !ok {
		return
	}
	seq := 0
	event := func(typ string, b []byte) {
		w.Write([]byte("event: " + typ + "\ndata: "))
		w.Write(b)
		w.Write([]byte("\n\n"))
		flush()
		seq++
	}
	head := func(b []byte, typ string) []byte {
		b = append(b, `{"type":"`+typ+`","sequence_number":`...)
		return strconv.AppendInt(b, int64(seq), 10)
	}
	b := head(nil, "response.created")
	event("response.created", append(appendResponse(append(b, `,"response":`...), req, o, false), '}'))
	if !s.streamText(ctx, o, done, func(text string) {
		b = head(b[:0], "response.output_text.delta")
		b = append(b, `,"item_id":"msg_sim_`...)
		b = strconv.AppendUint(b, o.id, 10)
		b = append(b, `","output_index":0,"content_index":0,"delta":"`...)
		b = append(b, text...)
		event("response.output_text.delta", append(b, `"}`...))
	}) {
		return
	}
	done()
	b = head(b[:0], "response.completed")
	b = appendResponse(append(b, `,"response":`...), req, o, true)
	event("response.completed", append(b, '}'))
}

// appendResponse appends the response object: in progress and empty
// (complete false, the stream's first event), else completed — or
// incomplete when the budget cut the text — with its output and usage.
func appendResponse(b []byte, req *request, o *outcome, complete bool) []byte {
	status := "in_progress"
	if complete {
		status = "completed"
		if o.completion >= req.MaxTokens {
			status = "incomplete"
		}
	}
	b = append(b, `{"id":"resp_sim_`...)
	b = strconv.AppendUint(b, o.id, 10)
	b = append(b, `","object":"response","created_at":`...)
	b = strconv.AppendInt(b, o.created, 10)
	b = append(b, `,"status":"`+status+`","model":"`+modelName+`","output":[`...)
	if !complete {
		return append(b, `],"usage":null}`...)
	}
	b = append(b, `{"type":"message","id":"msg_sim_`...)
	b = strconv.AppendUint(b, o.id, 10)
	b = append(b, `","status":"`+status+`","role":"assistant","content":[{"type":"output_text","annotations":[],"text":"`...)
	b = append(b, fillerText(o.completion)...)
	b = append(b, `"}]}],"usage":{"input_tokens":`...)
	b = strconv.AppendInt(b, int64(req.PromptTokens), 10)
	b = append(b, `,"input_tokens_details":{"cached_tokens":`...)
	b = strconv.AppendInt(b, int64(o.cached), 10)
	b = append(b, `},"output_tokens":`...)
	b = strconv.AppendInt(b, int64(o.completion), 10)
	b = append(b, `,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":`...)
	b = strconv.AppendInt(b, int64(req.PromptTokens+o.completion), 10)
	return append(b, `}}`...)
}
