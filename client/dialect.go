package client

import (
	"net/http"

	"github.com/ptuprobe/ptuprobe/results"
)

// dialect is one API's way of speaking, behind one small interface: how
// a request to it is built (its URL, its body around the prompt, its
// headers and key) and how its answer is read (a stream event by event,
// a body's usage). Each API is one type in a file of its own (azure.go,
// openai.go, anthropic.go, gemini.go, responses.go, raw.go) and one row
// of dialects: a new dialect is a new file and a row, and nothing else in
// the client asks which API it speaks.
type dialect interface {
	// url checks cfg's settings of the target for this API, fills their
	// defaults (a model, a method, a version) and returns the URL every
	// request goes to. Its errors name Config fields, never values.
	url(cfg *Config) (string, error)
	// frame is the synthetic request's JSON around its text: before TEXT
	// after, the output cap written as cfg.MaxTokens (splitFrame finds
	// it), system the shared prefix ("" for none).
	frame(cfg *Config, system string) (before, after string)
	// line is a prompts file line's body around its output cap: pre MAX
	// post, or why the line cannot be sent to this API in one request.
	line(cfg *Config, pl *promptLine) (pre, post []byte, err error)
	// overhead is the tokens the API's usage counts around the text of
	// a request of messages messages (0 where it is not known).
	overhead(messages int) int
	// ownCap reports whether the body names its output cap itself, so
	// that Config.MaxTokensField must stay max_tokens.
	ownCap() bool
	// header sets the headers every request to the API carries besides
	// its key (anthropic-version).
	header(cfg *Config, h http.Header)
	// keys are where the key is read from when no variable is named, in
	// the order tried, and the header each goes in; the first's header
	// is the API's key header. endpoint is Config.Endpoint (responses
	// takes azure's keys with one).
	keys(endpoint string) []keyVar

	// stream is a new reader of one streamed answer's events.
	stream() streamUsage
	// usage fills rec's token counts from an answer read into b (its
	// kept tail, and its head when headBytes asks for one).
	usage(b *bodyTail, rec *results.Record)
	// headBytes is how much of an answer's start is kept besides its
	// tail (0: none).
	headBytes(stream bool) int
}

// keyVar is an environment variable a key may be read from and the
// header that carries it.
type keyVar struct{ env, header string }

// dialects are the APIs a Target speaks, by Config.API.
var dialects = map[string]dialect{
	APIAzure:     azureDialect{},
	APIOpenAI:    openAIDialect{},
	APIAnthropic: anthropicDialect{},
	APIGemini:    geminiDialect{},
	APIResponses: responsesDialect{},
	APIRaw:       rawDialect{},
}

// dialectOf is api's dialect; an API not known (refused by New) is read
// as raw's, the most lenient.
func dialectOf(api string) dialect {
	if d, ok := dialects[api]; ok {
		return d
	}
	return rawDialect{}
}

// keyHeader is the header api's key goes in by default (endpoint is
// Config.Endpoint): Authorization when the API names none.
func keyHeader(api, endpoint string) string {
	if k := dialectOf(api).keys(endpoint); len(k) > 0 {
		return k[0].header
	}
	return "Authorization"
}
