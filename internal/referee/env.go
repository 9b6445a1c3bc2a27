package referee

import (
	"net/url"
	"slices"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// runEnv names the variable that marks the command and everything it
// starts with this run's id: what the referee looks for to end the
// processes that left the command's process group (proc_linux.go).
const runEnv = "PTUPROBE_REFEREE_RUN"

// credentialWords are the parts of a variable's name that make it
// credential-like wherever they stand in it (AZURE_OPENAI_KEY,
// AWS_SECRET_ACCESS_KEY, GITHUB_TOKEN, REDIS_PASSWORD,
// GOOGLE_APPLICATION_CREDENTIALS, MYAPP_APIKEY…).
var credentialWords = []string{"KEY", "SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "CREDENTIAL"}

// credentialParts are the credential-like parts that count only as a
// whole part of the name between underscores, dots or dashes: AUTH
// (SSH_AUTH_SOCK, BASIC_AUTH, NPM_CONFIG__AUTH, but not GIT_AUTHOR_NAME)
// and PWD (MYSQL_PWD, but not PWD, the working directory).
var credentialParts = []string{"AUTH", "PWD"}

// credentialNames are the cloud SDKs' and services' variables that hold
// or reach a credential, or name the real endpoint, under a name without
// a credential word: the Azure SDKs' managed identity (IDENTITY_ENDPOINT
// and IDENTITY_HEADER, MSI_ENDPOINT, IMDS_ENDPOINT), their certificate
// and user sign-in (AZURE_CLIENT_CERTIFICATE_PATH, AZURE_USERNAME),
// @ai-sdk/azure's AZURE_RESOURCE_NAME (the real resource's host), the
// AWS SDKs' AWS_PROFILE (which credentials file entry to use), and
// Kubernetes' KUBECONFIG.
var credentialNames = []string{
	"IDENTITY_ENDPOINT", "IDENTITY_HEADER", "MSI_ENDPOINT", "IMDS_ENDPOINT",
	"AZURE_CLIENT_CERTIFICATE_PATH", "AZURE_USERNAME", "AZURE_RESOURCE_NAME",
	"AWS_PROFILE", "AWS_DEFAULT_PROFILE", "KUBECONFIG",
}

// credentialLike reports whether a variable must not reach the command
// unless the user names it: its name holds a credential word
// (credentialWords, credentialParts), it is a known credential variable
// of a cloud SDK (credentialNames), or its value is a URL with a password
// in it (DATABASE_URL, REDIS_URL, HTTPS_PROXY=http://user:pass@…).
func credentialLike(name, value string) bool {
	n := strings.ToUpper(name)
	for _, w := range credentialWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	parts := strings.FieldsFunc(n, func(r rune) bool { return r == '_' || r == '.' || r == '-' })
	for _, p := range credentialParts {
		if len(parts) > 1 && slices.Contains(parts, p) {
			return true
		}
	}
	if slices.Contains(credentialNames, n) {
		return true
	}
	if strings.Contains(value, "://") && strings.Contains(value, "@") {
		if u, err := url.Parse(strings.TrimSpace(value)); err == nil && u.User != nil {
			if _, ok := u.User.Password(); ok {
				return true
			}
		}
	}
	return false
}

// refereeEnv is every variable the referee sets for the command, each
// replacing the caller's: the target and key variables of the OpenAI
// (OPENAI_BASE_URL, OPENAI_API_KEY, openai-go's OPENAI_ADMIN_KEY), Azure
// OpenAI (AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY,
// AZURE_OPENAI_AD_TOKEN, OPENAI_API_VERSION), Anthropic
// (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN) and
// Gemini (@google/genai: GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY and
// GOOGLE_API_KEY, which it prefers; GOOGLE_GENAI_USE_VERTEXAI off) SDKs;
// LiteLLM's (OPENAI_API_BASE; AZURE_API_BASE, AZURE_API_KEY and
// AZURE_API_VERSION, whose key @ai-sdk/azure reads too);
// PTUPROBE_REFEREE_URL, the simulator for clients of no SDK; and the
// run's mark (runEnv).
func refereeEnv(url, key, run string) map[string]string {
	return map[string]string{
		"OPENAI_BASE_URL":           url + "/v1",
		"OPENAI_API_BASE":           url + "/v1",
		"OPENAI_API_KEY":            key,
		"OPENAI_ADMIN_KEY":          key,
		"AZURE_OPENAI_ENDPOINT":     url,
		"AZURE_OPENAI_API_KEY":      key,
		"AZURE_OPENAI_AD_TOKEN":     key,
		"OPENAI_API_VERSION":        APIVersion,
		"AZURE_API_BASE":            url,
		"AZURE_API_KEY":             key,
		"AZURE_API_VERSION":         APIVersion,
		"ANTHROPIC_BASE_URL":        url,
		"ANTHROPIC_API_KEY":         key,
		"ANTHROPIC_AUTH_TOKEN":      key,
		"GOOGLE_GEMINI_BASE_URL":    url,
		"GEMINI_API_KEY":            key,
		"GOOGLE_API_KEY":            key,
		"GOOGLE_GENAI_USE_VERTEXAI": "false",
		"PTUPROBE_REFEREE_URL":      url,
		runEnv:                      run,
	}
}

// commandEnv is the command's environment: base without the variables
// the referee sets (set, which replace them), without every
// credential-like one (credentialLike) that pass does not name, and with
// loopback added to NO_PROXY. withheld counts the credential-like
// variables left out.
func commandEnv(base []string, set map[string]string, pass []string) (env []string, withheld int) {
	noProxy := "127.0.0.1,localhost"
	env = make([]string, 0, len(base)+len(set)+2)
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok {
			continue
		}
		if name == "NO_PROXY" || name == "no_proxy" {
			if value != "" {
				noProxy = value + "," + noProxy
			}
			continue
		}
		if credentialLike(name, value) && !slices.Contains(pass, name) {
			withheld++
			continue
		}
		env = append(env, kv)
	}
	for name, value := range set {
		env = append(env, name+"="+value)
	}
	return append(env, "NO_PROXY="+noProxy, "no_proxy="+noProxy), withheld
}

// validatePassEnv checks the variables the user passes: each a name,
// none of those the referee sets.
func validatePassEnv(pass []string) error {
	set := refereeEnv("", "", "")
	for _, name := range pass {
		if name == "" || strings.ContainsAny(name, "= \t\n") {
			return valid.Errorf("PassEnv", "%q: want a variable's name", clip(name))
		}
		if _, ok := set[name]; ok {
			return valid.Errorf("PassEnv", "%s: the referee sets it (pointed at the simulator), it cannot pass", clip(name))
		}
	}
	return nil
}
