package sim

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/ptuprobe/ptuprobe/internal/jsonscan"
)

// geminiRequest is a generateContent body: contents (required, each a
// role and parts whose "text" counts), an optional systemInstruction (the
// text the prompt cache may hold) and generationConfig.maxOutputTokens.
// Whether to stream is the path's to say.
func (f *fields) geminiRequest(defaultMax int) (request, error) {
	r := request{}
	if !f.contents.seen {
		return r, badRequest("contents is not specified")
	}
	size, system := f.contents.size, f.systemInstruction.set()
	if system {
		size = size.plus(f.systemInstruction.size)
	}
	r.countPrompt(f.tc, size, f.systemInstruction, system)
	return r, r.setBudget(f.maxOutputTokens, defaultMax, "generationConfig.maxOutputTokens")
}

// scanContents reads Gemini's contents array; an element may be null.
func scanContents(sc *jsonscan.Scanner, tc *tokenMemo) (messages, error) {
	var m messages
	if sc.Null() {
		return m, nil
	}
	if sc.Peek() != '[' {
		return m, named(errors.New("must be an array"), "contents")
	}
	err := sc.Array(func(i int) error {
		m.seen = true
		c, err := scanGeminiContent(sc, tc)
		m.size = m.size.plus(c.size)
		return named(err, "contents[%d]", i)
	})
	return m, err
}

// scanGeminiContent reads one Content, {"role":…,"parts":[{"text":…}]},
// as the characters and raw bytes of its parts; null is absent.
func scanGeminiContent(sc *jsonscan.Scanner, tc *tokenMemo) (c content, err error) {
	if sc.Null() {
		return content{}, nil
	}
	if sc.Peek() != '{' {
		if err := sc.Skip(); err != nil {
			return content{}, err
		}
		return content{}, errNotObject
	}
	err = sc.Object(func(key []byte) error {
		switch string(key) {
		case "parts":
			if sc.Peek() != '[' && sc.Peek() != 'n' {
				if err := sc.Skip(); err != nil {
					return err
				}
				return named(errors.New("must be an array"), "parts")
			}
			parts, err := scanContent(sc, tc)
			c.size = c.size.plus(parts.size)
			if parts.raw != nil {
				c.raw = parts.raw
			}
			return named(err, "parts")
		case "role":
			if sc.Null() {
				return nil
			}
			_, err := sc.Text()
			return named(err, "role")
		}
		return sc.Skip()
	})
	if err == nil && c.raw == nil {
		c.raw = []byte{} // present, if empty
	}
	return c, err
}

// scanGenerationConfig reads generationConfig's output budget.
func (f *fields) scanGenerationConfig(sc *jsonscan.Scanner) error {
	if sc.Null() {
		return nil
	}
	if sc.Peek() != '{' {
		return named(errNotObject, "generationConfig")
	}
	return sc.Object(func(key []byte) error {
		switch string(key) {
		case "maxOutputTokens", "max_output_tokens":
			var err error
			f.maxOutputTokens, err = scanOptInt(sc)
			return named(err, "generationConfig.maxOutputTokens")
		}
		return sc.Skip()
	})
}

// geminiModel is what Gemini answers report as modelVersion.
const geminiModel = "gemini-sim"

// respondGemini serves an admitted generateContent call: one
// GenerateContentResponse, or for streamGenerateContent a chunk per
// streamChunkTokens, as server-sent events (?alt=sse) or as the elements
// of one JSON array. Every chunk carries usageMetadata so far; the last
// one the finishReason.
func (s *Server) respondGemini(w http.ResponseWriter, r *http.Request, rt route, req *request, o *outcome, done func()) {
	a := geminiAnswer{req: req, o: o, finish: "STOP", id: "sim-" + strconv.FormatUint(o.id, 10)}
	if o.completion >= req.MaxTokens {
		a.finish = "MAX_TOKENS"
	}
	if req.Stream {
		s.streamGemini(w, r, rt.sse, a, done)
		return
	}
	if !s.beginWhole(r.Context(), w, o, done) {
		return
	}
	b := a.chunk(make([]byte, 0, 384+4*o.completion), fillerText(o.completion), o.completion, true)
	w.Write(append(b, '\n'))
}

// geminiAnswer is one answer's GenerateContentResponse chunks.
type geminiAnswer struct {
	req        *request
	o          *outcome
	finish, id string
}

// chunk appends the chunk that carries text, sent tokens so far.
func (a geminiAnswer) chunk(b []byte, text string, sent int, last bool) []byte {
	b = append(b, `{"candidates":[{"content":{"parts":[{"text":"`...)
	b = append(b, text...)
	b = append(b, `"}],"role":"model"},`...)
	if last {
		b = append(b, `"finishReason":"`+a.finish+`",`...)
	}
	b = append(b, `"index":0}],"usageMetadata":{"promptTokenCount":`...)
	b = strconv.AppendInt(b, int64(a.req.PromptTokens), 10)
	b = append(b, `,"candidatesTokenCount":`...)
	b = strconv.AppendInt(b, int64(sent), 10)
	b = append(b, `,"totalTokenCount":`...)
	b = strconv.AppendInt(b, int64(a.req.PromptTokens+sent), 10)
	if a.o.cached > 0 {
		b = append(b, `,"cachedContentTokenCount":`...)
		b = strconv.AppendInt(b, int64(a.o.cached), 10)
	}
	return append(b, `},"modelVersion":"`+geminiModel+`","responseId":"`+a.id+`"}`...)
}

// streamGemini streams a's chunks, as server-sent events or as the
// elements of one JSON array.
func (s *Server) streamGemini(w http.ResponseWriter, r *http.Request, sse bool, a geminiAnswer, done func()) {
	ctx := r.Context()
	flush, ok := s.beginStream(ctx, w, a.o, done, sse)
	if !ok {
		return
	}
	first := true
	emit := func(c []byte) {
		switch {
		case sse:
			w.Write([]byte("data: "))
			w.Write(c)
			w.Write([]byte("\r\n\r\n"))
		case first:
			w.Write([]byte("["))
			w.Write(c)
		default:
			w.Write([]byte(",\r\n"))
			w.Write(c)
		}
		first = false
		flush()
	}
	var b []byte
	if !s.decode(ctx, a.o, done, func(text string, sent int, last bool) {
		if last {
			done()
		}
		b = a.chunk(b[:0], text, sent, last)
		emit(b)
	}) {
		return
	}
	if !sse {
		w.Write([]byte("]\n"))
	}
}
