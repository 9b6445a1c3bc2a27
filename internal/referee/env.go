package referee

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/sim"
)

// runEnv names the variable that marks the command and everything it
// starts with this run's id: what the referee looks for to end the
// processes that left the command's process group (proc_linux.go).
const runEnv = "PTUPROBE_REFEREE_RUN"

// refereeEnv is every variable the referee sets for the command in a
// dialect, each replacing the caller's: the target and key variables of
// the OpenAI (OPENAI_BASE_URL, OPENAI_API_KEY, openai-go's
// OPENAI_ADMIN_KEY), Azure OpenAI (AZURE_OPENAI_ENDPOINT,
// AZURE_OPENAI_API_KEY, AZURE_OPENAI_AD_TOKEN, OPENAI_API_VERSION),
// Anthropic (ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN)
// and Gemini (@google/genai: GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY and
// GOOGLE_API_KEY, which it prefers; GOOGLE_GENAI_USE_VERTEXAI off) SDKs;
// LiteLLM's (OPENAI_API_BASE; AZURE_API_BASE, AZURE_API_KEY and
// AZURE_API_VERSION, whose key @ai-sdk/azure reads too);
// PTUPROBE_REFEREE_URL, the simulator for clients of no SDK; and the
// run's mark (runEnv). In the azure dialect the OpenAI API's base URLs
// (openAIBaseURLs) are not set: openai-node's AzureOpenAI takes
// OPENAI_BASE_URL before AZURE_OPENAI_ENDPOINT (src/azure.ts, the
// constructor's baseURL = readEnv('OPENAI_BASE_URL')) and throws when it
// is given an endpoint beside it ("baseURL and endpoint are mutually
// exclusive"), or sends to {OPENAI_BASE_URL}/deployments/…, a 404.
func refereeEnv(dialect, url, key, run string) map[string]string {
	env := map[string]string{
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
	if dialect == sim.DialectAzure {
		for _, name := range openAIBaseURLs {
			delete(env, name)
		}
	}
	return env
}

// openAIBaseURLs are the OpenAI API's base URL variables, which the
// azure dialect leaves unset (refereeEnv).
var openAIBaseURLs = []string{"OPENAI_BASE_URL", "OPENAI_API_BASE"}

// refereeNames are the variables the referee sets in some dialect: the
// caller's are never passed, whether the dialect served sets them or
// leaves them unset.
func refereeNames(name string) bool {
	_, ok := refereeEnv("", "", "", "")[name]
	return ok
}

// commandEnv is the command's environment: base without the variables
// the referee sets in any dialect (set, which replace them, or unset:
// their names are in unset when base had them), without every
// credential-like one (credentialLike) that pass does not name (their
// names, sorted, in withheld), and with loopback added to NO_PROXY.
func commandEnv(base []string, set map[string]string, pass []string) (env, withheld, unset []string) {
	noProxy := "127.0.0.1,localhost"
	env = make([]string, 0, len(base)+len(set)+2)
	for _, kv := range base {
		name, value, _ := strings.Cut(kv, "=")
		if _, ok := set[name]; ok {
			continue
		}
		if refereeNames(name) {
			unset = append(unset, name)
			continue
		}
		if name == "NO_PROXY" || name == "no_proxy" {
			if value != "" {
				noProxy = value + "," + noProxy
			}
			continue
		}
		if credentialLike(name, value) && !slices.Contains(pass, name) {
			withheld = append(withheld, name)
			continue
		}
		env = append(env, kv)
	}
	for name, value := range set {
		env = append(env, name+"="+value)
	}
	slices.Sort(withheld)
	slices.Sort(unset)
	return append(env, "NO_PROXY="+noProxy, "no_proxy="+noProxy), slices.Compact(withheld), slices.Compact(unset)
}

// noteEnv tells the user, on w, which of their variables the command was
// not given, by name (never a value): the credential-like ones, which
// --pass-env gives, and the referee's own that the dialect leaves unset.
func noteEnv(w io.Writer, dialect string, withheld, unset []string) {
	if w == nil {
		return
	}
	if len(withheld) > 0 {
		fmt.Fprintf(w, "referee: not given to the command, as credential-like by name or value (--pass-env NAME gives one): %s\n", strings.Join(withheld, ", "))
	}
	if len(unset) > 0 {
		fmt.Fprintf(w, "referee: unset for the command, the referee's own, which the %s dialect does not set: %s\n", dialect, strings.Join(unset, ", "))
	}
}

// validatePassEnv checks the variables the user passes: each a name,
// none of those the referee sets.
func validatePassEnv(pass []string) error {
	for _, name := range pass {
		if name == "" || strings.ContainsAny(name, "= \t\n") {
			return valid.Errorf("PassEnv", "%q: want a variable's name", clip(name))
		}
		if refereeNames(name) {
			return valid.Errorf("PassEnv", "%s: the referee sets it (pointed at the simulator), it cannot pass", clip(name))
		}
	}
	return nil
}
