package client

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// MaxBodyFileBytes bounds a request body read from a file ("@path"): 16 MiB,
// far above any chat request, far below what would strain the machine
// sending thousands of copies of it.
const MaxBodyFileBytes = 16 << 20

// MaxTimeout bounds a request's timeout: an hour is far beyond any LLM
// answer, and keeps every request, and so every run, bounded in time.
const MaxTimeout = time.Hour

// The environment variables a key is read from when Spec.APIKeyEnv is empty.
const (
	envAzureKey     = "AZURE_OPENAI_API_KEY"
	envAzureADToken = "AZURE_OPENAI_AD_TOKEN" // a Microsoft Entra token, sent as Bearer
	envOpenAIKey    = "OPENAI_API_KEY"
	envAnthropicKey = "ANTHROPIC_API_KEY"
	envGeminiKey    = "GEMINI_API_KEY"
)

// Spec is a target as a user asks for it: plain strings and numbers, before
// defaults, files and the environment are applied. It holds no secret: the
// key is named by the environment variable that holds it.
type Spec struct {
	// API is azure, openai, anthropic, gemini, responses or raw. Empty
	// picks one: azure when Endpoint is set, raw when Body, Method or
	// Headers are, else openai; anthropic, gemini and responses are only
	// ever asked for.
	API        string
	Endpoint   string // azure: https://NAME.openai.azure.com
	Deployment string // azure
	APIVersion string // azure; empty means DefaultAPIVersion
	// URL is the full request URL for openai, anthropic
	// (…/v1/messages), responses (…/v1/responses; with Endpoint, Azure's
	// {Endpoint}/openai/v1/responses instead) and raw; for gemini, the base URL
	// (https://generativelanguage.googleapis.com) the client adds
	// /v1beta/models/{Model}:generateContent to. It is required: no API
	// has a default URL.
	URL string
	// Model is the model for openai and responses (empty means
	// DefaultModel; on Azure, Deployment takes its place), anthropic and
	// gemini (required).
	Model string
	// AnthropicVersion is anthropic's anthropic-version header; empty
	// means DefaultAnthropicVersion.
	AnthropicVersion string
	Method           string // raw, any case; empty means POST with a body, else GET
	// Body is the raw API's request body: literal text, or "@path" to read
	// it from a regular file of at most MaxBodyFileBytes.
	Body    string
	Headers []string // extra request headers, each "Name: value"
	// APIKeyEnv names the environment variable holding the key. Empty means
	// the API's default: AZURE_OPENAI_API_KEY for azure (sent as api-key),
	// or AZURE_OPENAI_AD_TOKEN as a Bearer token when that one is empty;
	// OPENAI_API_KEY for openai (Bearer); ANTHROPIC_API_KEY for anthropic
	// (x-api-key); GEMINI_API_KEY for gemini (x-goog-api-key, never in the
	// URL); for responses, azure's with Endpoint, else openai's; none for
	// raw. A key is read without the white space around it, so a value of
	// only white space is empty. A named variable that is empty or unset
	// is an error, and so is an API's default one unless KeyOptional. A
	// named key goes in the
	// API's header: api-key for azure, x-api-key for anthropic,
	// x-goog-api-key for gemini, Bearer otherwise.
	APIKeyEnv string
	// KeyOptional sends no key when APIKeyEnv is empty and the API's
	// default variables are empty or unset, instead of refusing the
	// target: for a server that needs no key (a local OpenAI-compatible
	// one). A named APIKeyEnv is always required; raw needs no key.
	KeyOptional bool

	PromptTokens       int
	SharedPrefixTokens int
	MaxTokens          int
	MaxTokensField     string // max_tokens or max_completion_tokens; empty means max_tokens
	Stream             bool
	Timeout            time.Duration // per request; must be positive
	MaxConns           int           // connection pool size; 0 means 100
	// CACert names a PEM file of CA certificates trusted beside the
	// system's (a private CA, a TLS-inspecting proxy's); empty means the
	// system's alone.
	CACert string
	// Insecure skips the verification of the target's certificate: anyone
	// on the path could read and answer the requests, key included. It
	// cannot go with CACert.
	Insecure bool
	// HTTP1 speaks HTTP/1.1 alone to an https:// target (Config.HTTP1).
	HTTP1 bool
}

// Resolve turns s into a Config: it picks the API, reads the key through
// getenv (nil means os.Getenv), loads an "@path" body, splits headers and
// upper-cases the method. It refuses what it can judge alone with a
// *valid.Error naming the Spec field; New checks the rest. No error holds
// a key, a header value, the body or the target's address.
func Resolve(s Spec, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	c, err := resolve(s, getenv)
	if err != nil {
		return Config{}, err
	}
	return c, nil
}

// resolve is Resolve with getenv set; its Config is dropped on error.
func resolve(s Spec, getenv func(string) string) (Config, error) {
	c := Config{
		API: s.API, Endpoint: s.Endpoint, Deployment: s.Deployment, APIVersion: s.APIVersion,
		URL: s.URL, Model: s.Model, AnthropicVersion: s.AnthropicVersion, Method: strings.ToUpper(s.Method),
		PromptTokens: s.PromptTokens, SharedPrefixTokens: s.SharedPrefixTokens,
		MaxTokens: s.MaxTokens, MaxTokensField: s.MaxTokensField, Stream: s.Stream,
		Timeout: s.Timeout, MaxConns: s.MaxConns,
	}
	if s.Timeout <= 0 || s.Timeout > MaxTimeout {
		return c, valid.Errorf("Timeout", "must be positive and at most %s", MaxTimeout)
	}
	switch _, known := dialects[c.API]; {
	case known:
	case c.API == "":
		switch {
		case s.Endpoint != "":
			c.API = APIAzure
		case s.Body != "" || s.Method != "" || len(s.Headers) > 0:
			c.API = APIRaw
		default:
			c.API = APIOpenAI
		}
	default:
		return c, valid.Errorf("API", "must be %s", apiNames)
	}
	if s.Body != "" {
		if c.API != APIRaw {
			return c, valid.Errorf("Body", "goes only with {API} %s", APIRaw)
		}
		if name, ok := strings.CutPrefix(s.Body, "@"); ok {
			b, err := readBodyFile(name)
			if err != nil {
				return c, err
			}
			c.Body = b
		} else {
			c.Body = []byte(s.Body)
		}
	}
	for i, h := range s.Headers {
		name, value, ok := strings.Cut(h, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return c, valid.Errorf("Headers", "must look like 'Name: value' (number %d does not)", i+1)
		}
		c.Headers = append(c.Headers, Header{Name: name, Value: strings.TrimSpace(value)})
	}
	if err := resolveTLS(s, &c); err != nil {
		return c, err
	}
	var err error
	c.Key, c.KeyHeader, err = resolveKey(c.API, c.Endpoint, s.APIKeyEnv, getenv)
	if err == nil && c.Key == "" && !s.KeyOptional && c.API != APIRaw {
		err = keyRequired(c)
	}
	return c, err
}

// resolveTLS reads s's CA file into c.RootCAs and copies Insecure and
// HTTP1.
func resolveTLS(s Spec, c *Config) error {
	if s.Insecure && s.CACert != "" {
		return valid.Errorf("Insecure", "cannot go with {CACert}: a certificate not verified is verified against no CA")
	}
	c.InsecureSkipVerify, c.HTTP1 = s.Insecure, s.HTTP1
	if s.CACert == "" {
		return nil
	}
	pool, err := readCACert(s.CACert)
	c.RootCAs = pool
	return err
}

// keyRequired is the refusal of c, which has no key from its API's
// default variables; a setting New would refuse is named first, as the
// first thing to fix.
func keyRequired(c Config) error {
	if _, err := c.requestURL(); err != nil {
		return err
	}
	if err := c.checkChat(); err != nil {
		return err
	}
	vars := keyVariables(c.API, c.Endpoint)
	if len(vars) > 1 {
		vars = []string{vars[0] + " (or " + strings.Join(vars[1:], ", ") + ")"}
	}
	return valid.Errorf("APIKeyEnv", "is not given and %s is unset or empty: set it, or give {APIKeyEnv} the name of the variable that holds the key", vars[0])
}

// DefaultKeyVariables are the environment variables api's key is read
// from when Spec.APIKeyEnv is empty, in the order they are tried; none
// for raw. For responses they are openai's (azure's with an Endpoint:
// keyVariables).
func DefaultKeyVariables(api string) []string { return keyVariables(api, "") }

// keyVariables are api's default key variables with Config.Endpoint
// endpoint, in the order tried.
func keyVariables(api, endpoint string) []string {
	var vars []string
	for _, k := range dialectOf(api).keys(endpoint) {
		vars = append(vars, k.env)
	}
	return vars
}

// EnvKey is the key the environment variable name holds, as Resolve reads
// it from getenv: its value without the white space around it. A variable
// set to a blank (AZURE_OPENAI_API_KEY=' ') is then as empty as an unset
// one, refused or passed over rather than sent, and a key pasted with a
// line end is sent without it.
func EnvKey(getenv func(string) string, name string) string {
	return strings.TrimSpace(getenv(name))
}

// resolveKey reads the key for api (with Config.Endpoint endpoint) from
// the variable named, or from the API's default variables when named is
// empty (each as EnvKey reads it, the first set wins), and says which
// header carries it.
func resolveKey(api, endpoint, named string, environ func(string) string) (key, header string, err error) {
	getenv := func(name string) string { return EnvKey(environ, name) }
	header = keyHeader(api, endpoint)
	if named != "" {
		if key = getenv(named); key == "" {
			// The name is not repeated: a key pasted by mistake where its
			// variable's name belongs must not be printed back.
			return "", header, valid.Errorf("APIKeyEnv", "names an environment variable that is empty or unset")
		}
		return key, header, nil
	}
	for _, k := range dialectOf(api).keys(endpoint) {
		if key = getenv(k.env); key != "" {
			return key, k.header, nil
		}
	}
	return "", header, nil
}

// readBodyFile reads a request body from a regular file of at most
// MaxBodyFileBytes. Anything else is refused before it is opened: opening
// a FIFO blocks until a writer comes, and a device such as /dev/zero never
// ends. The read is bounded too, in case the file grew or was swapped
// after the check.
func readBodyFile(name string) ([]byte, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, bodyFileError(err)
	}
	if kind := fileKind(fi.Mode()); kind != "" {
		return nil, valid.Errorf("Body", "must name a regular file after @, not %s", kind)
	}
	if fi.Size() > MaxBodyFileBytes {
		return nil, bodyTooLarge()
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, bodyFileError(err)
	}
	defer f.Close()
	// One allocation of the size Stat gave; the limit reader still
	// bounds a file that grew since.
	var b bytes.Buffer
	b.Grow(int(fi.Size()) + 1)
	if _, err := b.ReadFrom(io.LimitReader(f, MaxBodyFileBytes+1)); err != nil {
		return nil, bodyFileError(err)
	}
	if b.Len() > MaxBodyFileBytes {
		return nil, bodyTooLarge()
	}
	return b.Bytes(), nil
}

func bodyTooLarge() error {
	return valid.Errorf("Body", "names a file (after @) larger than %d MiB, the limit for a request body", MaxBodyFileBytes>>20)
}

// bodyFileError says why a body file cannot be read. The path stays out of
// the reason (braces in it would read as field names when rendered); the
// user typed it and knows it.
func bodyFileError(err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return valid.Errorf("Body", "names a file (after @) that does not exist")
	case errors.Is(err, fs.ErrPermission):
		return valid.Errorf("Body", "names a file (after @) that cannot be read: permission denied")
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return valid.Errorf("Body", "names a file (after @) that cannot be read: %s", strings.NewReplacer("{", "(", "}", ")").Replace(err.Error()))
}

// fileKind names what a non-regular file is, or returns "" for a regular one.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	default:
		return "a special file"
	}
}
