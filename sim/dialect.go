package sim

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// route is what a request path asks for, in the configured dialect.
type route struct {
	op         operation
	apiVersion bool   // the Azure deployment and preview routes: ?api-version= is required
	named      bool   // the path names the deployment (else the body's model does)
	deployment string // named in the path
	stream     bool   // Gemini streamGenerateContent
	sse        bool   // Gemini streamGenerateContent?alt=sse
}

// route maps a request URL to an operation: the paths the dialect's SDKs
// call, and on the gateway profile the dialect's other metered paths.
func (s *Server) route(u *url.URL) route {
	gw := s.style.gateway
	p := u.Path
	switch s.cfg.Dialect {
	case DialectOpenAI:
		switch {
		case p == "/v1/chat/completions":
			return route{op: opChat}
		case p == "/v1/responses":
			return route{op: opResponses}
		case gw && p == "/v1/images/generations":
			return route{op: opImage}
		}
		return route{}
	case DialectAnthropic:
		switch {
		case p == "/v1/messages":
			return route{op: opMessages}
		case gw && p == "/v1/messages/count_tokens":
			return route{op: opCount}
		}
		return route{}
	case DialectGemini:
		return geminiRoute(u)
	}
	// azure and ietf: the Azure OpenAI routes (ietf is a header format, here
	// written by a gateway in front of the same API).
	if rest, ok := strings.CutPrefix(p, "/openai/deployments/"); ok {
		name, tail, _ := strings.Cut(rest, "/")
		if name != "" && tail == "chat/completions" {
			return route{op: opChat, apiVersion: true, named: true, deployment: name}
		}
		return route{}
	}
	switch p {
	case "/v1/chat/completions", "/openai/v1/chat/completions":
		return route{op: opChat}
	case "/v1/responses", "/openai/v1/responses":
		return route{op: opResponses}
	case "/openai/responses":
		// The preview route, with its api-version: where openai-node's
		// AzureOpenAI sends responses.create.
		return route{op: opResponses, apiVersion: true}
	}
	if !gw {
		return route{}
	}
	switch p {
	case "/v1/messages":
		return route{op: opMessages}
	case "/v1/messages/count_tokens":
		return route{op: opCount}
	case "/v1/images/generations":
		return route{op: opImage}
	}
	return route{}
}

// geminiRoute maps /v1beta/models/{model}:generateContent and
// :streamGenerateContent (and the same under /v1/); ?alt=sse streams
// server-sent events, else a JSON array.
func geminiRoute(u *url.URL) route {
	rest, ok := strings.CutPrefix(u.Path, "/v1beta/models/")
	if !ok {
		if rest, ok = strings.CutPrefix(u.Path, "/v1/models/"); !ok {
			return route{}
		}
	}
	model, method, ok := strings.Cut(rest, ":")
	if !ok || model == "" || strings.Contains(model, "/") {
		return route{}
	}
	rt := route{op: opGenerate, named: true, deployment: model}
	switch method {
	case "generateContent":
	case "streamGenerateContent":
		rt.stream = true
		rt.sse = u.Query().Get("alt") == "sse"
	default:
		return route{}
	}
	return rt
}

// Path is the request path a client of c's dialect calls for the PTU
// deployment (chat completions, messages or generateContent), without a
// query: the Azure route takes ?api-version=, Gemini's stream ?alt=sse.
func (c Config) Path(stream bool) string {
	switch c.Dialect {
	case DialectOpenAI:
		return "/v1/chat/completions"
	case DialectAnthropic:
		return "/v1/messages"
	case DialectGemini:
		if stream {
			return "/v1beta/models/" + c.Deployment + ":streamGenerateContent"
		}
		return "/v1beta/models/" + c.Deployment + ":generateContent"
	}
	return "/openai/deployments/" + c.Deployment + "/chat/completions"
}

// dialectKey is the caller's key where the dialect's clients send it:
// Bearer (openai), x-api-key or Bearer (anthropic: @anthropic-ai/sdk sends
// its key as Authorization: Bearer when given an auth token),
// x-goog-api-key (gemini), or any of api-key, x-api-key and Bearer (azure,
// ietf, as before dialects).
func (s *Server) dialectKey(h http.Header) (string, bool) {
	switch s.cfg.Dialect {
	case DialectOpenAI:
		return bearerKey(h)
	case DialectAnthropic:
		if v := field(h, "X-Api-Key"); v != "" {
			return v, true
		}
		return bearerKey(h)
	case DialectGemini:
		v := field(h, "X-Goog-Api-Key")
		return v, v != ""
	}
	return apiKey(h)
}

// preflight refuses what the dialect's service refuses before reading a
// body: the Azure route without api-version, a Messages call without
// anthropic-version, a Gemini call with its key in the URL, a key other
// than OnlyKey (counted in Stats.ForeignKeys: a key in the URL, Gemini's
// ?key= too, is one), a missing key when one is required. It reports
// whether it answered.
func (s *Server) preflight(w http.ResponseWriter, r *http.Request, rt route, hasKey bool) bool {
	switch {
	case rt.apiVersion && queryValue(r.URL.RawQuery, "api-version") == "":
		s.reject(w, http.StatusBadRequest, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required for all requests.")
	case s.cfg.Dialect == DialectAnthropic && field(r.Header, "Anthropic-Version") == "":
		s.reject(w, http.StatusBadRequest, "400", "anthropic-version: header is required")
	case s.cfg.OnlyKey != "" && s.foreignKey(r):
		s.mu.Lock()
		s.n.foreignKeys++
		s.mu.Unlock()
		if s.cfg.Dialect == DialectGemini && r.URL.Query().Has("key") {
			s.rejectURLKey(w)
			return true
		}
		s.rejectKey(w, true)
	case s.cfg.Dialect == DialectGemini && r.URL.Query().Has("key"):
		s.rejectURLKey(w)
	case s.cfg.RequireKey && !hasKey:
		s.rejectKey(w, false)
	default:
		return false
	}
	return true
}

// rejectURLKey answers a Gemini call with its key in the URL: the
// simulator takes keys only in headers, where no log keeps them.
func (s *Server) rejectURLKey(w http.ResponseWriter) {
	s.reject(w, http.StatusBadRequest, "400", "API keys are not accepted in the URL (?key=): send the key in the x-goog-api-key header.")
}

// queryValue is the first value of name in the raw query, as
// url.ParseQuery would read it: a plain query (no escapes, the common
// one) is read in place, without the map ParseQuery allocates on every
// request.
func queryValue(raw, name string) string {
	if strings.ContainsAny(raw, "%+;") {
		q, _ := url.ParseQuery(raw)
		return q.Get(name)
	}
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if k, v, _ := strings.Cut(pair, "="); k == name {
			return v
		}
	}
	return ""
}

// writeError answers in the dialect's error envelope; azure and ietf keep
// the profile's (Azure's, or the gateway's messages-style one).
func (s *Server) writeError(w http.ResponseWriter, status int, code, msg string) {
	switch s.cfg.Dialect {
	case DialectOpenAI:
		writeOpenAIError(w, status, openAIErrorType(status), openAICode(status, code), msg)
	case DialectAnthropic:
		s.writeGatewayError(w, status, gatewayErrorType(status), msg)
	case DialectGemini:
		writeGoogleError(w, status, msg, nil)
	default:
		if s.style.gateway {
			s.writeGatewayError(w, status, gatewayErrorType(status), msg)
			return
		}
		writeAzureError(w, status, code, msg)
	}
}

// writeOpenAIError writes {"error":{"message","type","param":null,"code"}};
// an empty code is null.
func writeOpenAIError(w http.ResponseWriter, status int, typ, code, msg string) {
	type body struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	}
	e := body{Message: msg, Type: typ}
	if code != "" {
		e.Code = &code
	}
	b, _ := json.Marshal(struct {
		Error body `json:"error"`
	}{e})
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func openAIErrorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "requests"
	case status >= 500:
		return "server_error"
	}
	return "invalid_request_error"
}

// openAICode is the code OpenAI gives the errors the simulator can make,
// from the Azure code the call site names; "" (null) for the rest.
func openAICode(status int, azureCode string) string {
	switch {
	case status == http.StatusUnauthorized:
		return "invalid_api_key"
	case status == http.StatusNotFound:
		return "unknown_url"
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	}
	return ""
}

// googleStatus is the google.rpc status name of an HTTP status.
func googleStatus(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	if status >= 500 {
		return "INTERNAL"
	}
	return "INVALID_ARGUMENT"
}

// writeGoogleError writes {"error":{"code","message","status","details"}}.
func writeGoogleError(w http.ResponseWriter, status int, msg string, details []any) {
	type body struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []any  `json:"details,omitempty"`
	}
	b, _ := json.Marshal(struct {
		Error body `json:"error"`
	}{body{status, msg, googleStatus(status), details}})
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

// writeRetryHeaders writes the retry headers a refusal's answer carries.
func writeRetryHeaders(h http.Header, a *answer) {
	switch {
	case a.retryAfterMS && a.retryAfter:
		setInt2(h, "Retry-After-Ms", a.waitMS, "Retry-After", a.retryAfterS())
	case a.retryAfterMS:
		setInt(h, "Retry-After-Ms", a.waitMS)
	case a.retryAfter:
		setInt(h, "Retry-After", a.retryAfterS())
	}
}

// openAIDuration writes whole milliseconds as OpenAI writes its resets:
// Go's duration form, "12ms", "1s", "1.5s", "6m0s".
func openAIDuration(ms int64) string {
	return (time.Duration(ms) * time.Millisecond).String()
}

// protoDuration writes whole milliseconds as a protobuf Duration in JSON:
// seconds with no fraction or exactly three digits of one ("30s", "1.500s").
func protoDuration(ms int64) string {
	s := strconv.FormatInt(ms/1000, 10)
	if f := ms % 1000; f != 0 {
		s += "." + strconv.FormatInt(1000+f, 10)[1:]
	}
	return s + "s"
}

// writeLimits writes the dialect's rate-limit fields, which every answer
// the model decided on carries (openai, anthropic, ietf; azure writes its
// own where it always did, gemini none), and a refusal's retry headers.
func (s *Server) writeLimits(h http.Header, a *answer) {
	switch s.cfg.Dialect {
	case DialectOpenAI:
		for _, l := range [...]struct {
			name string
			v    limitView
		}{{"Requests", a.requests}, {"Tokens", a.tokens}} {
			if !l.v.set {
				continue
			}
			setInt(h, "X-Ratelimit-Limit-"+l.name, l.v.limit)
			setInt(h, "X-Ratelimit-Remaining-"+l.name, l.v.remaining)
			h["X-Ratelimit-Reset-"+l.name] = []string{openAIDuration(l.v.resetMS)}
		}
	case DialectAnthropic:
		writeAnthropicLimit(h, "Requests", a.requests)
		if t := a.tokens; t.set {
			writeAnthropicLimit(h, "Tokens", t)
			writeAnthropicLimit(h, "Input-Tokens", t)
			if a.outputWeight > 0 {
				out := t
				out.limit = max(1, int64(float64(t.limit)/a.outputWeight))
				if t.remaining > 0 {
					out.remaining = max(1, int64(float64(t.remaining)/a.outputWeight))
				}
				writeAnthropicLimit(h, "Output-Tokens", out)
			}
		}
	case DialectIETF:
		b, tokens := a.binding()
		if !b.set {
			break
		}
		if s.cfg.IETFLegacy {
			setInt(h, "Ratelimit-Limit", b.limit)
			setInt(h, "Ratelimit-Remaining", b.remaining)
			setInt(h, "Ratelimit-Reset", b.resetS())
			break
		}
		unit := ""
		if tokens {
			unit = `;qu="tokens"`
		}
		h["Ratelimit-Policy"] = []string{`"default";q=` + strconv.FormatInt(b.limit, 10) + unit + ";w=" + strconv.FormatInt(b.windowS, 10)}
		h["Ratelimit"] = []string{`"default";r=` + strconv.FormatInt(b.remaining, 10) + ";t=" + strconv.FormatInt(b.resetS(), 10)}
	}
	if a.refused {
		writeRetryHeaders(h, a)
	}
}

func writeAnthropicLimit(h http.Header, name string, v limitView) {
	if !v.set {
		return
	}
	setInt(h, "Anthropic-Ratelimit-"+name+"-Limit", v.limit)
	setInt(h, "Anthropic-Ratelimit-"+name+"-Remaining", v.remaining)
	h["Anthropic-Ratelimit-"+name+"-Reset"] = []string{v.resetAt.UTC().Format(time.RFC3339)}
}

// writeRefusal writes a 429 of the model in a dialect other than azure:
// the limits, the retry headers and the dialect's rate-limit body. what
// says which limit refused, for the message.
func (s *Server) writeRefusal(w http.ResponseWriter, a *answer, what string) {
	h := w.Header()
	s.writeLimits(h, a)
	exhausted, kind := a.tokens, "tokens"
	if a.refusedByRequests {
		exhausted, kind = a.requests, "requests"
	}
	switch s.cfg.Dialect {
	case DialectOpenAI:
		msg := "Rate limit reached on " + kind + " (" + what + ")"
		if exhausted.set {
			msg += ": Limit " + strconv.FormatInt(exhausted.limit, 10) + ", Remaining 0. Please try again in " + openAIDuration(exhausted.resetMS)
		}
		writeOpenAIError(w, http.StatusTooManyRequests, kind, "rate_limit_exceeded", msg+".")
	case DialectAnthropic:
		s.writeGatewayError(w, http.StatusTooManyRequests, "rate_limit_error", "This request would exceed "+what+". Please wait and try again.")
	case DialectIETF:
		b, _ := json.Marshal(struct {
			Type     string   `json:"type"`
			Title    string   `json:"title"`
			Detail   string   `json:"detail"`
			Violated []string `json:"violated-policies"`
		}{"https://iana.org/assignments/http-problem-types#quota-exceeded",
			"Request cannot be satisfied as assigned quota has been exceeded", "Exceeded " + what + ".", []string{"default"}})
		h["Content-Type"] = []string{"application/problem+json"}
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write(append(b, '\n'))
	case DialectGemini:
		quotaValue := ""
		if exhausted.set {
			quotaValue = strconv.FormatInt(exhausted.limit, 10)
		}
		writeGoogleError(w, http.StatusTooManyRequests, "Resource has been exhausted (e.g. check quota): "+what+".", []any{
			map[string]any{
				"@type": "type.googleapis.com/google.rpc.QuotaFailure",
				"violations": []map[string]string{{
					"quotaMetric": "sim/" + kind,
					"quotaId":     "Sim" + strings.ToUpper(kind[:1]) + kind[1:],
					"quotaValue":  quotaValue,
				}},
			},
			map[string]string{
				"@type":      "type.googleapis.com/google.rpc.RetryInfo",
				"retryDelay": protoDuration(a.waitMS),
			},
		})
	}
}
