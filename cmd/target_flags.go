package cmd

import (
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

// spec is the target the flags name, for the client (or, naming none, the
// embedded simulator) to resolve.
func (f *targetFlags) spec() client.Spec {
	return client.Spec{
		API: f.api, Endpoint: f.endpoint, Deployment: f.deployment, APIVersion: f.apiVersion,
		URL: f.url, Model: f.model, Method: f.method, Body: f.body, Headers: f.headers,
		APIKeyEnv:    f.apiKeyEnv,
		PromptTokens: f.promptTokens, SharedPrefixTokens: f.sharedPrefixTokens,
		MaxTokens: f.maxTokens, MaxTokensField: f.maxTokensField, Stream: f.stream,
		Timeout: f.timeout,
	}
}

// targetFlagNames names, for the user, the client.Spec and client.Config
// fields that client errors refer to.
var targetFlagNames = flagNames{
	"API": "--api", "Endpoint": "--endpoint", "Deployment": "--deployment", "APIVersion": "--api-version",
	"URL": "--url", "Model": "--model", "Method": "--method", "Body": "--body", "Headers": "--header",
	"APIKeyEnv": "--api-key-env", "Key": "the key in the environment", "KeyHeader": "the key's header",
	"PromptTokens": "--prompt-tokens", "SharedPrefixTokens": "--shared-prefix-tokens",
	"MaxTokens": "--max-tokens", "MaxTokensField": "--max-tokens-field", "Stream": "--stream",
	"Timeout": "--timeout", "MaxConns": "--max-in-flight",
}
