package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/valid"
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
	fs.StringVar(&f.body, "body", "", "request body for --api raw: literal text, or @file to read it from a regular file (at most 16 MiB)")
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

// config resolves the flags into a client.Config; the client reads the key
// from the environment.
func (f *targetFlags) config(maxConns int) (client.Config, error) {
	return client.Resolve(client.Spec{
		API: f.api, Endpoint: f.endpoint, Deployment: f.deployment, APIVersion: f.apiVersion,
		URL: f.url, Model: f.model, Method: f.method, Body: f.body, Headers: f.headers,
		APIKeyEnv:    f.apiKeyEnv,
		PromptTokens: f.promptTokens, SharedPrefixTokens: f.sharedPrefixTokens,
		MaxTokens: f.maxTokens, MaxTokensField: f.maxTokensField, Stream: f.stream,
		Timeout: f.timeout, MaxConns: maxConns,
	}, nil)
}

// targetFlagNames names, for the user, the client.Spec and client.Config
// fields that client errors refer to.
var targetFlagNames = map[string]string{
	"API": "--api", "Endpoint": "--endpoint", "Deployment": "--deployment", "APIVersion": "--api-version",
	"URL": "--url", "Model": "--model", "Method": "--method", "Body": "--body", "Headers": "--header",
	"APIKeyEnv": "--api-key-env", "Key": "the key in the environment", "KeyHeader": "the key's header",
	"PromptTokens": "--prompt-tokens", "SharedPrefixTokens": "--shared-prefix-tokens",
	"MaxTokens": "--max-tokens", "MaxTokensField": "--max-tokens-field", "Stream": "--stream",
	"Timeout": "--timeout", "MaxConns": "--max-in-flight",
}

// targetError renders a client setting error with flag names, as a usage
// error.
func targetError(err error) error {
	var ve *valid.Error
	if errors.As(err, &ve) {
		err = flagError{ve}
	}
	return asUsage(err)
}

// flagError is a *valid.Error rendered with targetFlagNames.
type flagError struct{ v *valid.Error }

func (e flagError) Error() string {
	return e.v.Render(func(field string) string {
		if n, ok := targetFlagNames[field]; ok {
			return n
		}
		return field
	})
}

func (e flagError) Unwrap() error { return e.v }

// openTarget builds the target. With no --endpoint or --url it starts the
// embedded simulator on loopback and points the target at it; the returned
// close func stops both.
func (f *targetFlags) open(ctx context.Context, maxConns int, quiet bool, stderr io.Writer) (*client.Target, func(), error) {
	if f.external() {
		cfg, err := f.config(maxConns)
		if err != nil {
			return nil, nil, targetError(err)
		}
		t, err := client.New(cfg)
		if err != nil {
			return nil, nil, targetError(err)
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
		return nil, nil, targetError(err)
	}
	cfg.Key, cfg.KeyHeader = "sim", "api-key"
	t, err := client.New(cfg)
	if err != nil {
		srv.Close()
		return nil, nil, targetError(err)
	}
	return t, func() { t.Close(); srv.Close() }, nil
}
