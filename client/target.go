package client

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/sleep"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/retryafter"
)

// APIs a Target can speak.
const (
	APIAzure     = "azure"
	APIOpenAI    = "openai"
	APIAnthropic = "anthropic" // the Messages API (anthropic.go)
	APIGemini    = "gemini"    // the Gemini API's generateContent (gemini.go)
	APIResponses = "responses" // OpenAI's Responses API, and Azure's v1 route to it (responses.go)
	APIRaw       = "raw"
)

// apiNames lists the APIs for an error's reason.
var apiNames = strings.Join([]string{APIAzure, APIOpenAI, APIAnthropic, APIGemini, APIResponses}, ", ") + " or " + APIRaw

// Defaults.
const (
	DefaultAPIVersion   = "2024-10-21"
	DefaultPromptTokens = 1000
	DefaultMaxTokens    = 100
	DefaultTimeout      = 60 * time.Second
	DefaultModel        = "gpt-4o"
	// MaxBodyBytes bounds how much of a response body is read: 1 MiB. A
	// longer body is not read to its end and the attempt is recorded as
	// error "body"; a chat completion with its usage is a few kilobytes.
	MaxBodyBytes = 1 << 20
	// MaxHeaderBytes bounds the response headers read, status line and 1xx
	// answers included: 64 KiB. An LLM API's 429 or 200 carries well under
	// 4 KiB of headers (a dozen rate-limit, request-id and retry headers);
	// proxies and CDNs refuse far less than 64 KiB from a server (nginx
	// buffers 4–8 KiB by default). Go's default, 10 MB, lets a hostile
	// target hold 10 MB and the parser's copies of it in every connection:
	// 256 requests answered with 9.5 MB headers peaked at 2.9 GB RSS here
	// (5.6 GB in the break test that found it), 37 MB with this limit.
	// Beyond it the attempt is recorded as error "headers".
	MaxHeaderBytes = 64 << 10
	// ReadBufferSize and WriteBufferSize are each connection's buffers
	// (net/http's default is 4 KiB each). A connection holds them for as
	// long as it lives, so with thousands of streams open they were a
	// third of the client's memory per stream. A longer header line is
	// read in parts, and a request body past the write buffer goes to the
	// socket in one more write, as it did with 4 KiB for a chat prompt.
	ReadBufferSize  = 2 << 10
	WriteBufferSize = 1 << 10
)

// Bounds of the synthetic chat request, so that a typo cannot ask for a
// body the machine cannot build: 1099511627776 prompt tokens ended in a
// runtime fatal error.
const (
	// MaxPromptTokens bounds Config.PromptTokens: a million tokens, the
	// largest context window offered today (larger prompts no deployment
	// accepts), a body of about 4 MB at CharsPerToken.
	MaxPromptTokens = 1_000_000
	// MaxCompletionTokens bounds Config.MaxTokens: a million tokens, far
	// above what any model generates in one answer (tens of thousands).
	MaxCompletionTokens = 1_000_000
)

// Header is one extra request header for the raw API.
type Header struct{ Name, Value string }

// Config describes the target and the requests to send to it, resolved:
// the key read, the body loaded, the headers split. Resolve makes one from
// a Spec; a Go caller may also fill it directly.
type Config struct {
	API        string // azure, openai, anthropic, gemini, responses or raw
	Endpoint   string // azure, and responses on Azure: https://NAME.openai.azure.com
	Deployment string // azure, and responses on Azure (its model member)
	APIVersion string // azure
	// URL is the full request URL for openai, anthropic, responses
	// (without Endpoint) and raw, and the base URL for gemini (the
	// client adds the path).
	URL   string
	Model string // openai, anthropic, gemini and responses
	// AnthropicVersion is anthropic's anthropic-version header; empty
	// means DefaultAnthropicVersion.
	AnthropicVersion string
	Method           string // raw
	Body             []byte // raw
	Headers          []Header

	// Key is the secret itself (Resolve reads it from the environment).
	// KeyHeader carries it: "Authorization" sends it as a Bearer token,
	// any other name (azure's "api-key") as it is; empty means the API's
	// default: api-key for azure, x-api-key for anthropic, x-goog-api-key
	// for gemini, Authorization otherwise. An empty Key sends no auth
	// header.
	Key       string
	KeyHeader string

	PromptTokens       int
	SharedPrefixTokens int
	MaxTokens          int
	MaxTokensField     string // max_tokens or max_completion_tokens (azure and openai)
	// Shapes, when set, gives each request its sizes by its sequence
	// number (lengths drawn from distributions, a trace's rows); nil:
	// PromptTokens and MaxTokens for every request.
	Shapes Shaper
	// Tokenizer counts what the client did not build (Prompts' lines);
	// a synthetic prompt is built to its count by construction, and New
	// checks the words it is built of count so under it. Nil: the
	// synthetic prompts' words are taken as one token each (true of
	// o200k_base and cl100k_base); Prompts needs one.
	Tokenizer Counter
	// Prompts, when set, are the user's own requests (ReadPrompts), sent
	// instead of synthetic ones: line PromptLine(seq), each line's
	// max_tokens or else the request's (Shapes, MaxTokens).
	Prompts *Prompts
	// PromptLine picks request seq's line of Prompts' n; nil: in order,
	// cycled (seq mod n).
	PromptLine func(seq, n int) int
	// Stream asks for server-sent events with the usage in them (openai's
	// stream_options.include_usage; anthropic and gemini send it anyway);
	// the body is still read to the end.
	Stream bool

	Timeout  time.Duration
	MaxConns int // connection pool size; the dispatch concurrency

	// RootCAs, when set, are the CAs a target's certificate is verified
	// against (Resolve reads Spec.CACert into it); nil means the system's.
	RootCAs *x509.CertPool
	// InsecureSkipVerify skips the verification of the target's
	// certificate (Spec.Insecure).
	InsecureSkipVerify bool
	// HTTP1 speaks HTTP/1.1 to an https:// target (ALPN http/1.1 only,
	// as the Python and Node SDKs do) through the client's own round
	// tripper, where it would otherwise offer HTTP/2 (Spec.HTTP1).
	HTTP1 bool

	// Now is the clock used for HTTP-date waits without a Date header.
	Now func() time.Time
	// DialContext opens connections; nil means a TCP dialer with a 10 s
	// timeout. Tests pass an in-memory network (internal/memnet).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// Owner, when set, is the retry owner: requests go through an
	// admission.Transport with this policy, and every attempt it makes is
	// a row. Timeout then bounds each attempt, not the request.
	Owner *admission.Policy
	// PolicyName is written on every row's policy column.
	PolicyName string
	// AppAttempts and AppDelay model an application's own retry loop
	// around the owner (stacked owners, which multiply attempts): a request
	// whose final answer is a refusal is sent again, AppDelay later, up to
	// AppAttempts calls in all. 0 or 1: no such loop.
	AppAttempts int
	AppDelay    time.Duration
	// MarkSDKRetries sends X-Stainless-Retry-Count: 0 with every request,
	// and has the owner number its retries in it (admission's MarkRetries),
	// as the OpenAI SDKs do:
	// the simulator's witness then counts them as declared SDK retries.
	MarkSDKRetries bool
}

// Target sends requests built from a Config. It is safe for concurrent use.
type Target struct {
	cfg Config
	url string
	// template is every request but for its body and context: a shallow
	// copy of it per request shares its URL and header (nothing below
	// changes them; a request whose header must change gets its own).
	template *http.Request
	rt       http.RoundTripper // the retry owner, or the attempts' timeout, over the Transport
	attempts attemptTimeout    // the attempts' timeout, over the Transport
	prompt   bodySource        // nil for raw
	now      func() time.Time
	// secrets are never recorded: a header value holding one is Redacted.
	secrets *secrets
}

// New validates cfg and builds a Target with a keep-alive client sized to
// cfg.MaxConns. A refused setting is a *valid.Error naming the Config
// field; no error echoes the endpoint, URL, deployment, key or a header.
func New(cfg Config) (*Target, error) {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = 100
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	u, err := cfg.requestURL()
	if err != nil {
		return nil, err
	}
	t := &Target{url: u, now: cfg.Now}
	if cfg.API != APIRaw {
		if err := cfg.checkChat(); err != nil {
			return nil, err
		}
		if t.prompt, err = newBodySource(&cfg); err != nil {
			return nil, err
		}
	} else if cfg.Prompts != nil {
		return nil, valid.Errorf("Prompts", "goes not with {API} raw, which sends its own {Body}")
	}
	if err := cfg.checkHeaders(); err != nil {
		return nil, err
	}
	t.cfg = cfg
	t.secrets = newSecrets(&cfg)
	method := http.MethodPost
	if cfg.API == APIRaw {
		method = cfg.Method
	}
	t.template, err = http.NewRequest(method, u, nil)
	if err != nil {
		return nil, valid.Errorf("URL", "is not a URL a request can be sent to")
	}
	t.template.Header = t.requestHeader()
	if t.prompt == nil && cfg.Body != nil {
		t.template.GetBody, t.template.ContentLength = sharedBody(cfg.Body)
	}
	t.rt, t.attempts, err = newRoundTripper(cfg, u)
	if err != nil {
		return nil, err
	}
	return t, nil
}

// WithShapes is a Target like t whose requests Shapes sizes instead: the
// same transport, connections and retry owner (a plan of a run with
// sizes of its own, such as a replayed trace's). It refuses what New
// would, and a raw target or one that sends a prompts file.
func (t *Target) WithShapes(s Shaper) (*Target, error) {
	if t.prompt == nil || t.cfg.Prompts != nil {
		return nil, valid.Errorf("Shapes", "go only with synthetic prompts, not a raw body or a prompts file")
	}
	cfg := t.cfg
	cfg.Shapes = s
	if err := cfg.checkChat(); err != nil {
		return nil, err
	}
	src, err := newBodySource(&cfg)
	if err != nil {
		return nil, err
	}
	u := *t
	u.cfg, u.prompt = cfg, src
	return &u, nil
}

// requestURL checks the API's target settings, fills their defaults and
// returns the URL every request goes to.
func (cfg *Config) requestURL() (string, error) {
	d, ok := dialects[cfg.API]
	if !ok {
		return "", valid.Errorf("API", "must be %s", apiNames)
	}
	return d.url(cfg)
}

// checkChat checks the synthetic chat request's settings. With Shapes,
// the largest prompt is bounded as PromptTokens is, and a shape whose
// prompt is no longer than the shared prefix gets one token of its own.
func (cfg *Config) checkChat() error {
	prompt := cfg.PromptTokens
	if cfg.Shapes != nil {
		prompt = cfg.Shapes.LargestPrompt()
	}
	switch {
	case prompt < 1 || prompt > MaxPromptTokens:
		return valid.Errorf("PromptTokens", "must be from 1 to %d", MaxPromptTokens)
	case cfg.SharedPrefixTokens < 0 || cfg.SharedPrefixTokens >= prompt:
		return valid.Errorf("SharedPrefixTokens", "must be at least 0 and less than {PromptTokens}")
	case cfg.MaxTokens < 1 || cfg.MaxTokens > MaxCompletionTokens:
		return valid.Errorf("MaxTokens", "must be from 1 to %d", MaxCompletionTokens)
	}
	switch cfg.MaxTokensField {
	case "":
		cfg.MaxTokensField = "max_tokens"
	case "max_tokens", "max_completion_tokens":
	default:
		return valid.Errorf("MaxTokensField", "must be max_tokens or max_completion_tokens")
	}
	if cfg.MaxTokensField != "max_tokens" && dialectOf(cfg.API).ownCap() {
		return valid.Errorf("MaxTokensField", "must be max_tokens with {API} %s, whose body has its own name for the output cap", cfg.API)
	}
	return nil
}

// checkHeaders refuses what net/http would refuse on every request, so a
// bad header is one usage error rather than a run of failed rows.
func (cfg *Config) checkHeaders() error {
	for i, h := range cfg.Headers {
		if !isToken(h.Name) || !isHeaderValue(h.Value) {
			return valid.Errorf("Headers", "must have a name without spaces or separators and a value without control characters (number %d does not)", i+1)
		}
	}
	if !isHeaderValue(cfg.Key) {
		return valid.Errorf("Key", "must not hold control characters such as a line break")
	}
	if cfg.KeyHeader == "" {
		cfg.KeyHeader = keyHeader(cfg.API, cfg.Endpoint)
	}
	if !isToken(cfg.KeyHeader) {
		return valid.Errorf("KeyHeader", "must be a header name such as api-key or Authorization")
	}
	return nil
}

// newRoundTripper is a keep-alive pool sized to cfg.MaxConns (the
// client's own HTTP/1.1 round tripper for a direct http:// target, else
// net/http's Transport), under at, which bounds each attempt by
// cfg.Timeout, body included; with an Owner, attempts go through its
// admission.Transport (rt), else rt is at.
func newRoundTripper(cfg Config, target string) (rt http.RoundTripper, at attemptTimeout, err error) {
	dial := cfg.DialContext
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	tr := &http.Transport{
		Proxy:                  http.ProxyFromEnvironment,
		DialContext:            plainDial(dial),
		MaxIdleConns:           cfg.MaxConns,
		MaxIdleConnsPerHost:    cfg.MaxConns,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    tlsHandshakeTimeout,
		TLSClientConfig:        cfg.tlsConfig(),
		MaxResponseHeaderBytes: MaxHeaderBytes,
		ReadBufferSize:         ReadBufferSize,
		WriteBufferSize:        WriteBufferSize,
		ForceAttemptHTTP2:      true,
		// No Accept-Encoding: gzip of net/http's. An LLM endpoint's answer
		// is a small JSON document or an event stream sent as it comes;
		// asking for gzip made net/http add a header map of its own to
		// every HTTP/1.1 request, held for the request's life (some 400
		// bytes an open stream: bench/README.md, memory per open stream),
		// and would have a streamed answer's events wait in a compressor.
		DisableCompression: true,
	}
	var gate *dialGate
	var next pool = tr
	switch {
	case direct(target, "http"):
		next = newH1Transport(plainDial(dial), cfg.MaxConns)
	case cfg.HTTP1 && direct(target, "https"):
		next = newH1Transport(http1Dial(dial, tr.TLSClientConfig), cfg.MaxConns)
	case direct(target, "https"):
		// Through a proxy the Transport makes the TLS connection itself
		// (over the tunnel), without the gate.
		gate = newDialGate(dial, tr.TLSClientConfig)
		tr.DialTLSContext = gate.DialTLSContext
	}
	at = attemptTimeout{d: cfg.Timeout, next: next, gate: gate, queue: newDeadlines()}
	if cfg.Owner == nil {
		return at, at, nil
	}
	p := *cfg.Owner
	p.MarkRetries = p.MarkRetries || cfg.MarkSDKRetries
	owner, err := admission.New(at, p)
	if err != nil {
		return nil, at, err
	}
	return owner, at, nil
}

// do sends req through the round trippers, as http.Client.Do would with
// a CheckRedirect that returns http.ErrUseLastResponse: a redirect is
// recorded as the response it is (following it could carry the key to
// another host). The Client's own work is not needed, and its copy of
// every request's header, for the redirects it would follow, was a
// tenth of what a request allocated (bench/README.md).
func (t *Target) do(req *http.Request) (*http.Response, error) {
	return answered(t.rt.RoundTrip(req))
}

// answered is a round trip's answer as http.Client gives it: no response
// with an error, and a response's Body never nil.
func answered(resp *http.Response, err error) (*http.Response, error) {
	if err != nil {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, err
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	return resp, nil
}

// direct reports whether requests to target, a URL of the given scheme,
// go straight to its host (no proxy from the environment), so that its
// connections are the client's own to make: an http:// target's through
// the client's own HTTP/1.1 round tripper (h1Transport), an https://
// target's through the dial gate (or, with Config.HTTP1, h1Transport).
func direct(target, scheme string) bool {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != scheme {
		return false
	}
	p, err := http.ProxyFromEnvironment(&http.Request{URL: u})
	return err == nil && p == nil
}

// attemptTimeout bounds one attempt, from its send to its body's close:
// what http.Client.Timeout does for a whole request, moved below the retry
// owner so that waits between attempts do not count against it. When the
// dial gate makes the connections, the attempt's context follows its
// pass through the Transport (roundTrip), which the gate reads.
type attemptTimeout struct {
	d    time.Duration
	next pool
	gate *dialGate // nil: the Transport dials its own
	// The attempts' deadlines, under one timer (attemptCtx).
	queue *deadlines
}

// pool is the round tripper below the attempts: net/http's Transport,
// or an h1Transport for a plain http:// target.
type pool interface {
	http.RoundTripper
	CloseIdleConnections()
}

func (a attemptTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	return a.send(req.Context(), req.WithContext)
}

// send sends the request build makes on the attempt's context, a child
// of ctx: Target.attempt builds its request on it at once, where a
// request given to RoundTrip is copied onto it.
func (a attemptTimeout) send(ctx context.Context, build func(context.Context) *http.Request) (*http.Response, error) {
	if o, _ := ctx.Value(onWireKey{}).(*owned); o != nil {
		o.sending()
	}
	actx := newAttemptCtx(ctx, a.d, a.queue)
	rctx, rt := context.Context(actx), (*roundTrip)(nil)
	if a.gate != nil {
		rt, rctx = newRoundTrip(actx, a.gate)
	}
	resp, err := a.next.RoundTrip(build(rctx))
	if rt != nil {
		rt.end()
	}
	if err != nil {
		actx.cancel(context.Canceled)
		return nil, err
	}
	actx.body = resp.Body
	resp.Body = actx
	return resp, nil
}

// CloseIdleConnections lets Target.Close reach the pool below.
func (a attemptTimeout) CloseIdleConnections() { a.next.CloseIdleConnections() }

// checkURL accepts only absolute http and https URLs with a host name and,
// if any, a port from 1 to 65535: a port no socket can have would fail
// every request alike. The error names the field, never the value, which
// may hold a host the user keeps private.
func checkURL(field, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, valid.Errorf(field, "must be an absolute http:// or https:// URL")
	}
	if u.User != nil {
		return nil, valid.Errorf(field, "must not carry credentials; the key comes from the environment")
	}
	if u.Hostname() == "" {
		return nil, valid.Errorf(field, "must name a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return nil, valid.Errorf(field, "must have a port from 1 to 65535")
		}
	}
	return u, nil
}

// isToken reports whether s is an HTTP token (RFC 9110 §5.6.2), the form
// of a header name and of a method.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// isHeaderValue reports whether s can be sent as a header value: no control
// characters but tab. net/http would refuse it on every request instead,
// and each would be recorded as error "other".
func isHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < ' ' && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// Close releases idle connections.
func (t *Target) Close() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Body returns the request body for request seq (exported for tests and
// for `--dry-run`-style inspection).
func (t *Target) Body(seq int) []byte {
	if t.prompt == nil {
		return t.cfg.Body
	}
	return t.prompt.body(seq)
}

// MaxTokens returns the max_tokens value requested of request 0 (of
// every request, unless Shapes or Prompts vary it), or results.None.
func (t *Target) MaxTokens() int {
	_, m := t.sizes(0)
	return m
}

// sizes is what request seq carries: its prompt in tokens as
// prompt_tokens_sent counts it, and its output cap; results.None for
// both when the body is raw.
func (t *Target) sizes(seq int) (prompt, maxTokens int) {
	if t.prompt == nil {
		return results.None, results.None
	}
	return t.prompt.sizes(seq)
}

// PromptTokensSent is request seq's prompt as prompt_tokens_sent counts
// it (its text and the chat format's overhead), or results.None.
func (t *Target) PromptTokensSent(seq int) int {
	p, _ := t.sizes(seq)
	return p
}

// ChatOverhead is the chat format's tokens prompt_tokens_sent counts
// around a synthetic request's text (package func ChatOverhead), 0 for
// a raw body.
func (t *Target) ChatOverhead() int {
	if t.prompt == nil {
		return 0
	}
	return ChatOverhead(t.cfg.API, t.cfg.SharedPrefixTokens > 0)
}

// Sizes is request seq's prompt_tokens_sent and max_tokens (results.None
// for a raw body), without building it.
func (t *Target) Sizes(seq int) (promptSent, maxTokens int) { return t.sizes(seq) }

// newRequest is request seq: the template's copy on ctx, with its body.
func (t *Target) newRequest(ctx context.Context, seq int) *http.Request {
	req := t.template.WithContext(ctx)
	if t.prompt != nil {
		req.GetBody, req.ContentLength = t.prompt.reader(seq)
	}
	if req.GetBody != nil {
		req.Body, _ = req.GetBody()
	}
	return req
}

// sharedBody opens body, shared by every request and not copied, as
// http.NewRequest opens a *bytes.Reader's (net/http then writes a known
// in-memory body with the header, in one write); built once, so that a
// request makes no closure of its own.
func sharedBody(body []byte) (open func() (io.ReadCloser, error), n int64) {
	if len(body) == 0 {
		return func() (io.ReadCloser, error) { return http.NoBody, nil }, 0
	}
	return func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }, int64(len(body))
}

// requestHeader is the header every request carries, built once and
// shared by them all.
func (t *Target) requestHeader() http.Header {
	h := http.Header{}
	if t.prompt != nil || t.cfg.Body != nil {
		h.Set("Content-Type", "application/json")
	}
	h.Set("User-Agent", "ptuprobe")
	if t.cfg.Key != "" {
		if strings.EqualFold(t.cfg.KeyHeader, "Authorization") {
			h.Set("Authorization", "Bearer "+t.cfg.Key)
		} else {
			h.Set(t.cfg.KeyHeader, t.cfg.Key)
		}
	}
	dialectOf(t.cfg.API).header(&t.cfg, h)
	for _, f := range t.cfg.Headers {
		h.Add(f.Name, f.Value)
	}
	return h
}

// Send performs one request and hands each attempt's Record to record, in
// order. first carries the identity and schedule fields of the first
// attempt (its Seq selects the request body); start is the zero of
// intended_ms and sent_ms; once stop is done no further attempt starts
// (an attempt on the wire completes on ctx). A faulty target is recorded,
// never fatal. Whatever ends the request, it has a row: one its retry
// owner gave up on before sending it, or that a stop ended while it
// waited, ends with a row that was not sent (results.Record.NotSent).
// A stop with a deadline is the run's cap on the time spent sending
// (dispatch.Request.Run): no attempt goes out at or past it, the first
// included; one that would is given up locally (error class timeout), at
// once when its planned time is known to fall past it, and a stop that
// ends at its deadline is no interruption.
//
// Send is SendHead from first, for a caller that holds the Record by
// value: every row of the request starts from first.
func (t *Target) Send(ctx context.Context, first results.Record, start time.Time, stop context.Context, record func(*results.Record)) {
	t.SendHead(ctx, &Head{Row: &first, Seq: first.Seq, Wave: first.Wave, IntendedMS: first.IntendedMS, SentMS: first.SentMS}, start, stop, record)
}

// Head is what a request's rows take from its plan: Row, the row every
// row of the run starts from (its identity fields and attempt 1 set, the
// rest results.Blank's; shared by the run's requests and never written),
// and the first attempt's seq, wave, intended_ms and sent_ms. A request
// holds it, not a Record, while it is open: each attempt's row is built
// when the attempt ends (its body read), so that an open stream holds no
// Record (bench/README.md, memory per open stream).
type Head struct {
	Row        *results.Record
	Seq, Wave  int
	IntendedMS float64
	SentMS     float64
}

// first sets rec to the first attempt's row as far as the plan fills it.
func (h *Head) first(rec *results.Record) {
	*rec = *h.Row
	rec.Seq, rec.Wave = h.Seq, h.Wave
	rec.IntendedMS, rec.SentMS = h.IntendedMS, h.SentMS
}

// rows holds the rows of requests without a retry owner once recorded,
// for the next: a Record is 416 bytes with pointers, allocated and
// scanned per request. record must not keep the one it is given past
// its call (dispatch.Sink's contract).
var rows = sync.Pool{New: func() any { return new(results.Record) }}

// SendHead is Send for a request its plan describes by h: without a
// retry owner its one row is built once its answer has been read and is
// handed to record (and reused after: record must not keep it); with
// one, each attempt's row is built as the attempt ends. Nothing of a
// Record is held while an answer is read, on the heap or on the stack of
// the goroutine that holds an open stream (bench/README.md, memory per
// open stream).
func (t *Target) SendHead(ctx context.Context, h *Head, start time.Time, stop context.Context, record func(*results.Record)) {
	switch {
	case pastCap(stop):
		t.givenUpAtCap(h, start, record)
	case t.cfg.Owner == nil:
		t.sendOnce(ctx, h, record)
	default:
		t.sendOwned(ctx, h, start, stop, record)
	}
}

// sendOnce is SendHead without a retry owner: one attempt, its row built
// from h once its answer is read. Its frame and exchange's are on the
// stack of every open stream: keep them small. The reading state is in
// this frame (88 bytes more of it), not on the heap, where it was 96
// bytes live for a stream's life: the worker's paths have some 384 bytes
// or more to spare under its first 4 KiB stack with it here, since
// retryafter's families left their frame (round 10 pooled it when that
// margin was 128–192:
// bench/README.md, round 11; internal/campaign's TestOpenStreamStack
// guards the margin).
func (t *Target) sendOnce(ctx context.Context, h *Head, record func(*results.Record)) {
	var a reading
	t.exchange(ctx, h.Seq, &a)
	t.recordOnce(ctx, h, &a, record)
}

// recordOnce builds and records the row of sendOnce's attempt, read into
// a. Not inlined: its work would take room in sendOnce's frame, which is
// on the stack under every open stream's read.
//
//go:noinline
func (t *Target) recordOnce(ctx context.Context, h *Head, a *reading, record func(*results.Record)) {
	rec := rows.Get().(*results.Record)
	h.first(rec)
	rec.PromptTokensSent, rec.MaxTokens = t.sizes(h.Seq)
	t.fillAnswer(ctx, a, rec)
	record(rec)
	rows.Put(rec)
}

// givenUpAtCap records the request as given up locally, not sent: the
// run's cap on the time spent sending passed before it left. Not inlined:
// its Attempt would take room in SendHead's frame.
//
//go:noinline
func (t *Target) givenUpAtCap(h *Head, start time.Time, record func(*results.Record)) {
	o := &owned{t: t, head: *h, start: start, record: record}
	o.notSent(admission.Attempt{Decision: admission.Decision{Action: admission.ActionGiveUp, Err: admission.ClassTimeout}})
}

// sendOwned is SendHead through the retry owner; a function of its own,
// so that a request without one keeps its frame small (the stack an open
// stream holds).
func (t *Target) sendOwned(ctx context.Context, h *Head, start time.Time, stop context.Context, record func(*results.Record)) {
	o := &owned{t: t, head: *h, start: start, record: record}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// A stop while no attempt is on the wire (the owner holds the request
	// for a retry's wait, the shared cooldown or the pace's send slot)
	// ends the request: nothing is sent after Ctrl-C. An attempt on the
	// wire keeps its grace.
	defer context.AfterFunc(stop, func() {
		if o.waiting() {
			o.cut(time.Time{})
		}
	})()
	o.stop, o.cancel = stop, cancel
	app := policy.Outer{Calls: t.cfg.AppAttempts, Delay: t.cfg.AppDelay}
	app.Run(func(int) bool { return o.call(ctx) }, func(d time.Duration) bool {
		// The application's own retry, stopped before it went (or
		// planned past the cap on sending).
		again := time.Now().Add(d)
		if o.cut(again) || sleep.For(stop, d) != nil || ctx.Err() != nil {
			o.notSent(admission.Attempt{Planned: again, Decision: admission.Decision{Err: admission.ClassCanceled}})
			return false
		}
		return true
	})
}

// owned is one request sent through the retry owner: it records each
// attempt the owner reports, numbering them across an application's own
// retry loop, and the final one once its body is read.
type owned struct {
	t      *Target
	head   Head // each attempt's row starts from it
	start  time.Time
	record func(*results.Record)
	stop   context.Context
	cancel context.CancelFunc

	mu     sync.Mutex
	n      int  // attempts recorded so far
	onWire bool // an attempt has gone to the transport and has not ended
	capped bool // cut because its next attempt would go past stop's deadline
	final  *admission.Attempt
}

// pastCap reports whether stop ended at its deadline: the run's cap on
// the time spent sending passed (a cancel ends it with context.Canceled).
func pastCap(stop context.Context) bool {
	return errors.Is(stop.Err(), context.DeadlineExceeded)
}

// cut ends the request before its next attempt, planned at next (zero:
// now), when a stop came or next falls at or past stop's deadline (the
// run's cap on sending): the owner's wait is cut, and the attempt is
// recorded as not sent. It reports whether it cut.
func (o *owned) cut(next time.Time) bool {
	d, bounded := o.stop.Deadline()
	overCap := bounded && !next.IsZero() && !next.Before(d)
	if o.stop.Err() == nil && !overCap {
		return false
	}
	o.mu.Lock()
	o.capped = o.capped || overCap || pastCap(o.stop)
	o.mu.Unlock()
	o.cancel()
	return true
}

// wasCapped reports whether the request was cut by the cap on sending
// (a deadline), not by a stop.
func (o *owned) wasCapped() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.capped || pastCap(o.stop)
}

// onWireKey carries the owned request to the transport below the owner
// (attemptTimeout), which marks when each attempt goes on the wire.
type onWireKey struct{}

// waiting reports whether no attempt of the request is on the wire: the
// owner holds it before an attempt, or it is between two.
func (o *owned) waiting() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return !o.onWire
}

// sending marks an attempt on the wire (attemptTimeout, as it goes).
func (o *owned) sending() {
	o.mu.Lock()
	o.onWire = true
	o.mu.Unlock()
}

// call sends the request once through the owner and reports whether its
// final answer was a refusal (429 or 503).
func (o *owned) call(ctx context.Context) (refused bool) {
	t := o.t
	o.final = nil
	o.mu.Lock()
	o.onWire = false
	o.mu.Unlock()
	ctx = context.WithValue(admission.WithAttemptObserver(ctx, o.observe), onWireKey{}, o)
	req := t.newRequest(ctx, o.head.Seq)
	if t.cfg.MarkSDKRetries {
		req.Header = req.Header.Clone() // the template's is shared
		req.Header.Set(admission.SDKRetryHeader, "0")
	}
	resp, err := t.do(req)
	f := o.final
	if f == nil || f.Sent.IsZero() {
		// Nothing left on the wire: the owner gave up (its last attempt is
		// recorded, sent or not), or the wait before an attempt was cut
		// by a stop (recorded as not sent).
		if resp != nil {
			resp.Body.Close()
		}
		return false
	}
	if err != nil {
		rec := o.next(f.Planned, f.Sent)
		rec.Decision, rec.Fallback = string(f.Action), f.Fallback
		rec.LatencyMS = sinceMS(f.Sent)
		rec.Error = Classify(ctx, err)
		var giveUp *admission.GiveUpError
		if errors.As(err, &giveUp) {
			rec.Error = ""
		}
		o.record(rec)
		return false
	}
	// The attempt's number is taken as its answer comes, its row built
	// once the body is read: no Record is held while a stream is open.
	n := o.number()
	a := reading{resp: resp, start: f.Sent}
	t.readAnswer(&a)
	rec := o.row(n, f.Planned, f.Sent)
	rec.Decision, rec.Fallback = string(f.Action), f.Fallback
	t.fillAnswer(ctx, &a, rec)
	o.record(rec)
	return resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable
}

// observe records every attempt whose response the owner consumed (a
// refusal it waited out or redirected, or gave up on) and every attempt
// it did not send that ends the request; the attempt whose response
// comes back to the caller is kept for call to record.
func (o *owned) observe(a admission.Attempt) {
	if !a.Done.IsZero() {
		o.mu.Lock()
		o.onWire = false
		o.mu.Unlock()
	}
	switch a.Action {
	case admission.ActionSleep:
		// Stopped while this attempt was on the wire, or its retry would
		// go past the cap on sending: no retry.
		o.cut(a.Done.Add(a.Slept))
	case admission.ActionRedirect:
		o.cut(time.Time{})
	}
	if a.Sent.IsZero() {
		o.notSent(a)
		return
	}
	if a.Done.IsZero() {
		o.final = &a
		return
	}
	rec := o.next(a.Planned, a.Sent)
	rec.Decision, rec.Fallback = string(a.Action), a.Fallback
	if a.Header != nil {
		rec.Status = a.Status
		rec.TTFBMS = ms(a.Headers.Sub(a.Sent))
		o.t.captureHeaders(a.Header, a.Body, rec)
	}
	rec.LatencyMS = ms(a.Done.Sub(a.Sent))
	if a.Err != nil {
		rec.Error = Classify(context.Background(), a.Err)
	}
	o.record(rec)
}

// notSent records an attempt the owner did not send, which ends the
// request: given up locally (the cooldown or the pace's slot does not fit
// the budget), cut by a stop while it waited, or not built. A locally
// refused attempt that redirects records nothing: its fallback attempt
// follows, and is the request's row.
func (o *owned) notSent(a admission.Attempt) {
	if a.Action == admission.ActionRedirect {
		return
	}
	rec := o.next(a.Planned, time.Time{})
	rec.Fallback = a.Fallback
	switch class := a.Decision.Err; {
	case class == admission.ClassCanceled && o.wasCapped():
		rec.Decision, rec.Error = results.DecisionGiveUpLocal, results.ClassTimeout
	case class == admission.ClassCanceled:
		rec.Decision, rec.Error = results.DecisionInterrupted, results.ClassCanceled
	case a.Action == admission.ActionGiveUp || class == admission.ClassTimeout:
		rec.Decision, rec.Error = results.DecisionGiveUpLocal, class
	default:
		// Its request could not be built (a body that would not replay,
		// a Fallback that failed): a failure here, as it was to go.
		rec.SentMS, rec.LatencyMS = ms(a.Done.Sub(o.start)), 0
		rec.Decision, rec.Error = string(a.Action), results.ClassOther
	}
	o.record(rec)
}

// next is the Record of the next attempt: the first's identity, the next
// attempt number, its planned and actual send time (zero: not sent, and
// so no sent_ms and no latency_ms).
func (o *owned) next(planned, sent time.Time) *results.Record {
	return o.row(o.number(), planned, sent)
}

// number takes the next attempt's number.
func (o *owned) number() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n++
	return o.n
}

// row is the Record of attempt n (see next).
func (o *owned) row(n int, planned, sent time.Time) *results.Record {
	rec := new(results.Record)
	o.head.first(rec)
	rec.Attempt = n
	if n > 1 && !planned.IsZero() {
		rec.IntendedMS = ms(planned.Sub(o.start))
	}
	rec.SentMS = ms(sent.Sub(o.start))
	if sent.IsZero() {
		rec.SentMS, rec.LatencyMS = results.None, results.None
	}
	prompt, maxTokens := o.t.sizes(rec.Seq)
	rec.MaxTokens = maxTokens
	if !sent.IsZero() {
		rec.PromptTokensSent = prompt
	}
	rec.Policy = o.t.cfg.PolicyName
	return rec
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// attempt performs one attempt of request seq and fills rec's response
// fields: TTFBMS, LatencyMS, Status, Error, the retry headers and parsed
// wait, spillover, rate-limit headers, utilization, usage, MaxTokens and
// PromptTokensSent.
func (t *Target) attempt(ctx context.Context, seq int, rec *results.Record) {
	rec.PromptTokensSent, rec.MaxTokens = t.sizes(seq)
	var a reading
	t.exchange(ctx, seq, &a)
	t.fillAnswer(ctx, &a, rec)
}

// reading is one attempt's exchange as it goes: what its row takes from
// it once its body has ended (fillAnswer). It stands in for the row while
// the body is read, a stream's whole life.
type reading struct {
	start time.Time // when the attempt was sent
	resp  *http.Response
	err   error // the round trip's, when no response came
	ttfb  float64
	lat   float64
	rerr  error // the body's read
	body  responseBody
}

// exchange performs one attempt of request seq into a: its round trip
// and, when a response came, the reading of its body.
func (t *Target) exchange(ctx context.Context, seq int, a *reading) {
	a.start = time.Now()
	resp, err := answered(t.attempts.send(ctx, func(ctx context.Context) *http.Request { return t.newRequest(ctx, seq) }))
	if err != nil {
		a.err, a.lat = err, sinceMS(a.start)
		return
	}
	a.resp = resp
	t.readAnswer(a)
}

// readAnswer reads a.resp's body (bounded), sent at a.start, into a.
func (t *Target) readAnswer(a *reading) {
	resp := a.resp
	a.ttfb = sinceMS(a.start)
	if t.cfg.Stream && ok2xx(resp.StatusCode) {
		a.body.stream = &streamBody{usage: t.usageFor(), newTail: t.newBody}
	} else {
		tail := t.newBody()
		tail.fromPool()
		a.body.tail = &tail
	}
	a.rerr = a.body.readFrom(resp.Body)
	resp.Body.Close()
	a.lat = sinceMS(a.start)
}

func ok2xx(status int) bool { return status >= 200 && status < 300 }

// fillAnswer fills rec's response fields from a, an attempt whose answer
// has been read (or that had none), and gives back its body's storage.
func (t *Target) fillAnswer(ctx context.Context, a *reading, rec *results.Record) {
	if a.body.tail != nil {
		defer a.body.tail.release()
	}
	if a.err != nil {
		rec.LatencyMS = a.lat
		rec.Error = Classify(ctx, a.err)
		return
	}
	resp := a.resp
	rec.TTFBMS = a.ttfb
	rec.LatencyMS = a.lat
	rec.Status = resp.StatusCode
	switch n := a.body.n(); {
	case a.rerr != nil:
		rec.Error = Classify(ctx, a.rerr)
		if rec.Error == results.ClassOther {
			rec.Error = results.ClassBody
		}
	case n > MaxBodyBytes:
		// Not read to its end: a body that never ends must not hold the
		// request until the timeout, nor usage be parsed from a part.
		rec.Error = results.ClassBody
	}
	t.captureHeaders(resp.Header, a.body.whole(rec.Error == ""), rec)
	if ok2xx(resp.StatusCode) && rec.Error == "" {
		a.body.parseUsage(t, rec)
	}
	if a.body.stream != nil {
		// A streamed answer's token-level timing, from its content
		// events; ttfb_ms stays the time to its headers.
		a.body.stream.timing.fill(a.start, rec)
	}
}

func sinceMS(t time.Time) float64 {
	return float64(time.Since(t)) / float64(time.Millisecond)
}

// captureHeaders fills rec from the response of status rec.Status: its
// header h and body, the body whole or nil. The retry headers are recorded
// as received; the advice, the dialect and the limits are what
// retryafter.FromResponse reads. Every value read passes the secret check
// first, whole: a retry header holding a secret is recorded as Redacted
// (and so gives no wait), a numeric one is left absent, and an error body
// holding one is not read for advice.
func (t *Target) captureHeaders(h http.Header, body []byte, rec *results.Record) {
	rec.RetryAfterMS = t.recordHeader(httpfield.Field(h, "Retry-After-Ms"))
	rec.RetryAfter = t.recordHeader(httpfield.Field(h, "Retry-After"))
	f := t.scanHeader(h)
	var a retryafter.Advice
	if s := silentAdvice(rec.Status, f&headerLoud == 0, body); s != nil {
		a = *s
	} else {
		a = retryafter.FromResponse(rec.Status, t.vetted(h, f&headerLeaks != 0), t.vettedBody(body), t.now())
	}
	rec.WaitMS, rec.WaitSource, rec.Dialect = a.Wait.MS, a.Wait.Source, a.Dialect
	rec.RatelimitRemainingRequests, rec.RatelimitRemainingTokens = a.RemainingRequests, a.RemainingTokens
	rec.LimitRequests, rec.LimitTokens = a.LimitRequests, a.LimitTokens
	rec.ResetRequestsMS, rec.ResetTokensMS = a.ResetRequestsMS, a.ResetTokensMS
	rec.UtilizationPct = a.UtilizationPct
	rec.Spillover = f&headerSpilled != 0
}

// What scanHeader finds in an answer's header.
const (
	headerLoud    = 1 << iota // a field retryafter reads (Date aside) or looks for: !httpfield.Silent
	headerLeaks               // a value of a field retryafter reads carries a secret
	headerSpilled             // an x-ms-spillover-from-* field
)

// scanHeader is one pass over h for what captureHeaders needs before it
// reads the advice: whether retryafter would read any of it, whether a
// value it would read carries a secret (vetted), and whether the answer
// spilled over. Not inlined: a map iterator would take room in
// captureHeaders' frame, which is on the stack of every request
// (bench/README.md).
//
//go:noinline
func (t *Target) scanHeader(h http.Header) int {
	const spill = "x-ms-spillover-from-"
	f, vet := 0, !t.secrets.none()
	for k, vs := range h {
		if len(k) >= len(spill) && strings.EqualFold(k[:len(spill)], spill) {
			f |= headerSpilled
		}
		if !httpfield.SilentField(k) {
			f |= headerLoud
		}
		if vet && f&headerLeaks == 0 && httpfield.Reads(k) {
			for _, v := range vs {
				if t.secrets.leaks(v) {
					f |= headerLeaks
					break
				}
			}
		}
	}
	return f
}

// silentAdvices holds what an empty header advises, by status (from 100
// to 599), each read once: silentAdvice's answers.
var silentAdvices [500]atomic.Pointer[retryafter.Advice]

// silentAdvice is the advice of an answer of status whose header
// retryafter would not read (silent: httpfield.Silent) and whose body it
// would not either (no RetryInfo): what an empty header advises, read
// once per status, so that such an answer is not read at all (a success
// from a target that sends no rate-limit fields: 40% of bench/race.sh's
// answers; bench/README.md, round 11). Nil when the answer must be read.
func silentAdvice(status int, silent bool, body []byte) *retryafter.Advice {
	if !silent || status < 100 || status >= 600 || bytes.Contains(body, retryInfo) {
		return nil
	}
	slot := &silentAdvices[status-100]
	if a := slot.Load(); a != nil {
		return a
	}
	a := retryafter.FromResponse(status, nil, nil, time.Time{})
	slot.Store(&a)
	return &a
}

// vetted is h as retryafter may read it: every value of a field it reads
// (httpfield.Reads) that carries a secret is Redacted, which reads as no
// number and no date. It is h itself when no value does (leaks false,
// from scanHeader), as is usual.
func (t *Target) vetted(h http.Header, leaks bool) http.Header {
	if !leaks {
		return h
	}
	out := h.Clone()
	for k, vs := range out {
		if !httpfield.Reads(k) {
			continue
		}
		for i, v := range vs {
			if t.secrets.leaks(v) {
				vs[i] = Redacted
			}
		}
	}
	return out
}

// retryInfo marks the one body retryafter reads: a Google error with a
// google.rpc.RetryInfo detail.
var retryInfo = []byte("google.rpc.RetryInfo")

// vettedBody is body as retryafter may read it: nil when it carries a
// secret. Only a body with a RetryInfo is read at all, so only such a
// body is checked, and the check costs nothing for the others.
func (t *Target) vettedBody(body []byte) []byte {
	if bytes.Contains(body, retryInfo) && t.secrets.leaks(string(body)) {
		return nil
	}
	return body
}

// recordHeader is v as a row holds it: Redacted when it carries a secret
// (checked before the cut, which could leave a prefix of the key), else
// cleaned by results.CleanHeader.
func (t *Target) recordHeader(v string) string {
	if t.secrets.leaks(v) {
		return Redacted
	}
	return results.CleanHeader(v)
}

// Classify maps a transport error to one of the results.Class* error classes.
//
// A failure on this machine is "local", not a fault of the target: out of
// file descriptors (EMFILE, ENFILE), of local ports (EADDRNOTAVAIL), of
// socket buffers or memory (ENOBUFS, ENOMEM). A run with more requests in
// flight than the descriptor limit allows meets them by the thousand.
//
// Classes found by message (net/http exports no value for them) are
// matched on the innermost error, never on text a target sent: a
// malformed status line, which net/http quotes, is "other" whatever it
// says.
func Classify(ctx context.Context, err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.Canceled) || ctx.Err() == context.Canceled:
		return results.ClassCanceled
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, os.ErrDeadlineExceeded):
		return results.ClassTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return results.ClassTimeout
	}
	switch {
	case isLocal(err):
		return results.ClassLocal
	case errors.Is(err, syscall.ECONNREFUSED):
		return results.ClassRefused
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		// The transport closed the connection under the request's writer
		// when its reader saw the peer's reset: a reset all the same (a
		// cancel was classified above).
		errors.Is(err, net.ErrClosed):
		return results.ClassReset
	}
	msg := innermost(err).Error()
	switch {
	case strings.HasPrefix(msg, "malformed HTTP"):
		return results.ClassOther
	case isHeadersTooLarge(msg):
		return results.ClassHeaders
	}
	var rhe tls.RecordHeaderError
	var ae tls.AlertError
	var cve *tls.CertificateVerificationError
	if errors.As(err, &rhe) || errors.As(err, &ae) || errors.As(err, &cve) || strings.Contains(err.Error(), "tls: ") || strings.Contains(err.Error(), "x509: ") {
		return results.ClassTLS
	}
	if strings.Contains(err.Error(), "server closed") || strings.Contains(err.Error(), "connection reset") {
		return results.ClassReset
	}
	return results.ClassOther
}

// localErrnos are the failures of a system call that say this machine ran
// out of something, whatever the target does.
var localErrnos = []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EADDRNOTAVAIL, syscall.ENOBUFS, syscall.ENOMEM}

// isLocal reports whether err is one of localErrnos. The resolver reports
// its own failures as text (a *net.DNSError wraps no errno), so its
// message is compared with each errno's.
func isLocal(err error) bool {
	for _, e := range localErrnos {
		if errors.Is(err, e) {
			return true
		}
	}
	var dns *net.DNSError
	if errors.As(err, &dns) {
		for _, e := range localErrnos {
			if strings.HasSuffix(dns.Err, e.Error()) {
				return true
			}
		}
	}
	return false
}

// innermost is the last error of err's Unwrap chain.
func innermost(err error) error {
	for {
		next := errors.Unwrap(err)
		if next == nil {
			return err
		}
		err = next
	}
}

// isHeadersTooLarge reports whether msg, an innermost error's message, is
// net/http's refusal of response headers over MaxHeaderBytes. Neither
// HTTP/1 nor HTTP/2 exports a value for it; TestHostileTargets pins the
// HTTP/1 message.
func isHeadersTooLarge(msg string) bool {
	return strings.HasPrefix(msg, "net/http: server response headers exceeded ") || // HTTP/1
		strings.HasSuffix(msg, "http2: response header list larger than advertised limit") || // HTTP/2
		msg == "header list too large" // HTTP/2, 1xx answers
}
