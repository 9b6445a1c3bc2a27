package cmd

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/sim"
)

// targetFlags are the flags that say where requests go and what they carry.
type targetFlags struct {
	api, endpoint, deployment, apiVersion string
	url, model, method, body              string
	headers                               []string
	apiKeyEnv                             string
	promptTokens, sharedPrefixTokens      int
	maxTokens                             int
	maxTokensField                        string
	stream                                bool
	timeout                               time.Duration
	sim                                   sim.Config
}

func (f *targetFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.api, "api", "", "target API: azure, openai or raw (default: azure with --endpoint, raw with --url and --body/--method/--header, else openai with --url)")
	fs.StringVar(&f.endpoint, "endpoint", "", "Azure OpenAI endpoint, e.g. https://NAME.openai.azure.com (never written to any output)")
	fs.StringVar(&f.deployment, "deployment", "", "Azure OpenAI deployment name (never written to any output)")
	fs.StringVar(&f.apiVersion, "api-version", client.DefaultAPIVersion, "Azure OpenAI api-version query parameter")
	fs.StringVar(&f.url, "url", "", "full request URL for --api openai (…/v1/chat/completions) or --api raw")
	fs.StringVar(&f.model, "model", client.DefaultModel, "model field for --api openai")
	fs.StringVar(&f.method, "method", "", "HTTP method for --api raw (default POST with --body, else GET)")
	fs.StringVar(&f.body, "body", "", "request body for --api raw: literal text, or @file to read it from a file")
	fs.StringArrayVar(&f.headers, "header", nil, "extra request header 'Name: value' (repeatable)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the key (default AZURE_OPENAI_API_KEY, or AZURE_OPENAI_AD_TOKEN as a Bearer token, for azure; OPENAI_API_KEY for openai)")
	fs.IntVar(&f.promptTokens, "prompt-tokens", client.DefaultPromptTokens, "approximate prompt size in tokens (1 token ≈ 4 characters)")
	fs.IntVar(&f.sharedPrefixTokens, "shared-prefix-tokens", 0, "tokens of a common leading system message shared by every request (exercises prompt caching)")
	fs.IntVar(&f.maxTokens, "max-tokens", client.DefaultMaxTokens, "max_tokens requested per call")
	fs.StringVar(&f.maxTokensField, "max-tokens-field", "max_tokens", "body field for the output cap: max_tokens or max_completion_tokens")
	fs.BoolVar(&f.stream, "stream", false, "ask for a streamed answer (server-sent events with a final usage chunk)")
	fs.DurationVar(&f.timeout, "timeout", client.DefaultTimeout, "per-request timeout")
	f.sim = sim.DefaultConfig()
	addSimFlags(fs, &f.sim, "sim-")
}

// external reports whether the user named a target.
func (f *targetFlags) external() bool { return f.endpoint != "" || f.url != "" }

// config resolves the flags into a client.Config. Secrets are read from the
// environment here and nowhere else.
func (f *targetFlags) config(maxConns int) (client.Config, error) {
	c := client.Config{
		API: f.api, Endpoint: f.endpoint, Deployment: f.deployment, APIVersion: f.apiVersion,
		URL: f.url, Model: f.model, Method: strings.ToUpper(f.method),
		PromptTokens: f.promptTokens, SharedPrefixTokens: f.sharedPrefixTokens,
		MaxTokens: f.maxTokens, MaxTokensField: f.maxTokensField, Stream: f.stream,
		Timeout: f.timeout, MaxConns: maxConns,
	}
	if f.timeout <= 0 {
		return c, fmt.Errorf("--timeout must be positive")
	}
	if c.API == "" {
		switch {
		case f.endpoint != "":
			c.API = client.APIAzure
		case f.body != "" || f.method != "" || len(f.headers) > 0:
			c.API = client.APIRaw
		default:
			c.API = client.APIOpenAI
		}
	}
	if f.body != "" {
		if c.API != client.APIRaw {
			return c, fmt.Errorf("--body goes with --api raw")
		}
		if name, ok := strings.CutPrefix(f.body, "@"); ok {
			b, err := os.ReadFile(name)
			if err != nil {
				return c, fmt.Errorf("read --body file: %w", err)
			}
			c.Body = b
		} else {
			c.Body = []byte(f.body)
		}
	}
	for _, h := range f.headers {
		name, value, ok := strings.Cut(h, ":")
		if !ok || strings.TrimSpace(name) == "" {
			return c, fmt.Errorf("--header must look like 'Name: value'")
		}
		c.Headers = append(c.Headers, client.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
	}
	env := f.apiKeyEnv
	switch c.API {
	case client.APIAzure:
		c.KeyHeader = "api-key"
		if env == "" {
			env = "AZURE_OPENAI_API_KEY"
			if os.Getenv(env) == "" && os.Getenv("AZURE_OPENAI_AD_TOKEN") != "" {
				env, c.KeyHeader = "AZURE_OPENAI_AD_TOKEN", "Authorization"
			}
		}
	case client.APIOpenAI, client.APIRaw:
		c.KeyHeader = "Authorization"
		if env == "" && c.API == client.APIOpenAI {
			env = "OPENAI_API_KEY"
		}
	}
	if env != "" {
		c.Key = os.Getenv(env)
		if c.Key == "" && f.apiKeyEnv != "" {
			return c, fmt.Errorf("--api-key-env names %s, which is empty or unset", env)
		}
	}
	return c, nil
}

// openTarget builds the target. With no --endpoint or --url it starts the
// embedded simulator on loopback and points the target at it; the returned
// close func stops both.
func (f *targetFlags) open(ctx context.Context, maxConns int, quiet bool, stderr io.Writer) (*client.Target, func(), error) {
	if f.external() {
		cfg, err := f.config(maxConns)
		if err != nil {
			return nil, nil, asUsage(err)
		}
		t, err := client.New(cfg)
		if err != nil {
			return nil, nil, asUsage(err)
		}
		return t, t.Close, nil
	}
	if f.api == client.APIRaw || f.body != "" || f.method != "" {
		return nil, nil, usageError("--api raw needs --url")
	}
	if err := f.sim.Validate(); err != nil {
		return nil, nil, usageError("embedded simulator: %s", simProblems(err, "sim-"))
	}
	// The simulator outlives a Ctrl-C until the run has recorded its
	// in-flight requests; closing the target stops it.
	srv, err := sim.Start(context.WithoutCancel(ctx), f.sim, "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("start the embedded simulator: %w", err)
	}
	if !quiet {
		fmt.Fprintf(stderr, "no target given: using the embedded PTU simulator at %s\n", srv.URL)
	}
	sf := *f
	sf.api, sf.endpoint, sf.deployment, sf.apiKeyEnv = client.APIAzure, srv.URL, srv.Deployment, ""
	cfg, err := sf.config(maxConns)
	if err != nil {
		srv.Close()
		return nil, nil, asUsage(err)
	}
	cfg.Key = "sim"
	t, err := client.New(cfg)
	if err != nil {
		srv.Close()
		return nil, nil, asUsage(err)
	}
	return t, func() { t.Close(); srv.Close() }, nil
}
