package cmd

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/sim"
)

// targetFlags are the flags that say where requests go and what they carry.
type targetFlags struct {
	api, endpoint, deployment, apiVersion string
	url, model, anthropicVersion          string
	method, body                          string
	headers                               []string
	apiKeyEnv                             string
	promptTokens, sharedPrefixTokens      int // promptTokens: the fixed size, or the largest drawn
	maxTokens                             int
	maxTokensField                        string
	tokens                                tokenFlags
	stream                                bool
	timeout                               time.Duration
	sim                                   sim.Config
	simProfile                            *simProfile
	tls                                   tlsFlags
}

func (f *targetFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.api, "api", "", "target API: azure, openai, anthropic (the Messages API), gemini (the Gemini API), responses (the Responses API: --url …/v1/responses, or --endpoint and --deployment for Azure's /openai/v1/responses) or raw (default: azure with --endpoint, raw with --url and --body/--method/--header, else openai with --url; anthropic, gemini and responses only when asked for)")
	fs.StringVar(&f.endpoint, "endpoint", "", "Azure OpenAI endpoint, e.g. https://NAME.openai.azure.com (never written to any output)")
	fs.StringVar(&f.deployment, "deployment", "", "Azure OpenAI deployment name (never written to any output)")
	fs.StringVar(&f.apiVersion, "api-version", client.DefaultAPIVersion, "Azure OpenAI api-version query parameter")
	fs.StringVar(&f.url, "url", "", "full request URL for --api openai (…/v1/chat/completions), anthropic (e.g. https://api.anthropic.com/v1/messages) or raw; for --api gemini the base URL (e.g. https://generativelanguage.googleapis.com), without a key in it; never written to any output")
	fs.StringVar(&f.model, "model", "", "model for --api openai (default "+client.DefaultModel+"), anthropic or gemini (required for these two; never written to any output)")
	fs.StringVar(&f.anthropicVersion, "anthropic-version", client.DefaultAnthropicVersion, "anthropic-version header for --api anthropic")
	fs.StringVar(&f.method, "method", "", "HTTP method for --api raw (default POST with --body, else GET)")
	fs.StringVar(&f.body, "body", "", "request body for --api raw: literal text, or @file to read it from a regular file (at most 16 MiB)")
	fs.StringArrayVar(&f.headers, "header", nil, "extra request header 'Name: value' (repeatable)")
	fs.StringVar(&f.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the key (default AZURE_OPENAI_API_KEY, or AZURE_OPENAI_AD_TOKEN as a Bearer token, for azure; OPENAI_API_KEY for openai, as a Bearer token; ANTHROPIC_API_KEY for anthropic, in x-api-key; GEMINI_API_KEY for gemini, in x-goog-api-key, never in the URL; for responses, azure's with --endpoint, else openai's)")
	f.tokens.add(fs)
	fs.IntVar(&f.sharedPrefixTokens, "shared-prefix-tokens", 0, "tokens of a common leading system message shared by every request (exercises prompt caching; with --api anthropic it is marked for caching, as that API caches nothing unmarked)")
	fs.StringVar(&f.maxTokensField, "max-tokens-field", "max_tokens", "body field for the output cap with --api azure or openai: max_tokens or max_completion_tokens")
	fs.BoolVar(&f.stream, "stream", false, "ask for a streamed answer (server-sent events with the usage in them)")
	fs.DurationVar(&f.timeout, "timeout", client.DefaultTimeout, "per-request timeout")
	f.tls.add(fs)
	f.sim = sim.DefaultConfig()
	f.simProfile = addSimFlags(fs, &f.sim, "sim-")
}

// resolveSim reads the profile --sim-profile names into the simulator's
// settings, the other --sim-* flags given overriding it, and the sizes
// (--prompt-tokens, --max-tokens): called before the settings are read.
func (f *targetFlags) resolveSim() error {
	if err := f.tokens.resolve(f); err != nil {
		return err
	}
	return f.simProfile.resolve()
}

// target is the campaign target the flags name, with its token settings.
func (f *targetFlags) target() campaign.Target {
	return campaign.Target{
		Spec: f.spec(), Sim: f.sim,
		Tokenizer: f.tokens.tokenizer, Lengths: f.tokens.lengths, Prompts: f.tokens.prompts, PromptsOrder: f.tokens.order,
	}
}

// spec is the target the flags name, for the client (or, naming none, the
// embedded simulator) to resolve.
func (f *targetFlags) spec() client.Spec {
	return f.tls.apply(client.Spec{
		API: f.api, Endpoint: f.endpoint, Deployment: f.deployment, APIVersion: f.apiVersion,
		URL: f.url, Model: f.model, AnthropicVersion: f.anthropicVersion,
		Method: f.method, Body: f.body, Headers: f.headers,
		APIKeyEnv:    f.apiKeyEnv,
		PromptTokens: f.promptTokens, SharedPrefixTokens: f.sharedPrefixTokens,
		MaxTokens: f.maxTokens, MaxTokensField: f.maxTokensField, Stream: f.stream,
		Timeout: f.timeout, KeyOptional: f.keyOptional(),
	})
}

// keyOptional: a plain --url (no --api, no --api-key-env) is any
// OpenAI-compatible server, perhaps a local one that needs no key, so
// OPENAI_API_KEY is sent when set and not required; every other target
// needs its key (raw none).
func (f *targetFlags) keyOptional() bool {
	return f.api == "" && f.endpoint == "" && f.url != "" && f.apiKeyEnv == ""
}

// noteNoKey says, unless quiet, that a plain --url goes without a key.
func (f *targetFlags) noteNoKey(w io.Writer, quiet bool, getenv func(string) string) {
	if quiet || !f.keyOptional() || f.body != "" || f.method != "" || len(f.headers) > 0 {
		return
	}
	if getenv == nil {
		getenv = os.Getenv
	}
	if client.EnvKey(getenv, client.DefaultKeyVariables(client.APIOpenAI)[0]) == "" {
		fmt.Fprintf(w, "note: %s is unset: sending no key (--api openai requires one; --api-key-env names another variable)\n", client.DefaultKeyVariables(client.APIOpenAI)[0])
	}
}

// targetNames names the fields of the target's errors by the flags the
// user typed: sim.Config and client.Spec share field names (Deployment),
// and only the embedded simulator's configuration is checked when no
// target is named, only the Spec when one is.
func targetNames(embedded bool) flagNames {
	if embedded {
		return merge(targetFlagNames, simFlagNames("sim-"))
	}
	return merge(simFlagNames("sim-"), targetFlagNames)
}

// targetFlagNames names, for the user, the client.Spec and client.Config
// fields that client errors refer to.
var targetFlagNames = flagNames{
	"API": "--api", "Endpoint": "--endpoint", "Deployment": "--deployment", "APIVersion": "--api-version",
	"URL": "--url", "Model": "--model", "AnthropicVersion": "--anthropic-version",
	"Method": "--method", "Body": "--body", "Headers": "--header",
	"APIKeyEnv": "--api-key-env", "KeyOptional": "--url without --api", "Key": "the key in the environment", "KeyHeader": "the key's header",
	"PromptTokens": "--prompt-tokens", "SharedPrefixTokens": "--shared-prefix-tokens",
	"MaxTokens": "--max-tokens", "MaxTokensField": "--max-tokens-field", "Stream": "--stream",
	"Timeout": "--timeout", "MaxConns": "--max-in-flight",
	"Tokenizer": "--tokenizer", "Prompts": "--prompts", "PromptsOrder": "--prompts-order", "MaxTokensFactor": "--max-tokens-factor",
	"CACert": "--ca-cert", "Insecure": "--insecure", "HTTP1": "--http1",
}
