package cmd

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/results"
)

const canaryModel = "canary-model-k2"

// TestNewAPIsKeepSecrets runs burst against scripted Messages API and
// Gemini API targets with keys from their default variables: the key is
// in its header and never in a URL, usage is read, and neither the key,
// the model nor the host reaches the results file, stdout or stderr, even
// from a target that echoes the key back.
func TestNewAPIsKeepSecrets(t *testing.T) {
	// Not parallel: t.Setenv.
	tests := []struct {
		api, env, keyHeader, path string
		ok                        string // a 200 body with usage
		prompt, completion        int
	}{
		{"anthropic", "ANTHROPIC_API_KEY", "X-Api-Key", "/v1/messages",
			`{"id":"msg_01","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","stop_sequence":null,` +
				`"usage":{"input_tokens":40,"cache_creation_input_tokens":0,"cache_read_input_tokens":960,"output_tokens":12}}`, 1000, 12},
		{"gemini", "GEMINI_API_KEY", "X-Goog-Api-Key", "",
			`{"candidates":[{"content":{"parts":[{"text":"hi"}],"role":"model"},"finishReason":"STOP","index":0}],` +
				`"usageMetadata":{"promptTokenCount":1000,"candidatesTokenCount":12,"totalTokenCount":1012},"modelVersion":"m","responseId":"r"}`, 1000, 12},
	}
	for _, tt := range tests {
		t.Run(tt.api, func(t *testing.T) {
			t.Setenv(tt.env, canaryKey)
			var n atomic.Int64
			var mu sync.Mutex
			var wrong []string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				mu.Lock()
				if r.Header.Get(tt.keyHeader) != canaryKey || strings.Contains(r.URL.String(), canaryKey) || r.Header.Get("Authorization") != "" {
					wrong = append(wrong, "key not in "+tt.keyHeader+" alone")
				}
				if tt.api == "gemini" && r.URL.Path != "/v1beta/models/"+canaryModel+":generateContent" {
					wrong = append(wrong, "path "+r.URL.Path)
				}
				if tt.api == "anthropic" && (r.URL.Path != tt.path || r.Header.Get("Anthropic-Version") != client.DefaultAnthropicVersion) {
					wrong = append(wrong, "path or version")
				}
				mu.Unlock()
				w.Header().Set("request-id", "req_"+canaryModel)
				switch n.Add(1) % 3 {
				case 0:
					io.WriteString(w, tt.ok)
				case 1:
					w.Header().Set("retry-after", "2")
					w.WriteHeader(429)
				default: // a hostile target echoing the key
					w.Header().Set("retry-after-ms", r.Header.Get(tt.keyHeader))
					w.Header().Set("retry-after", "key "+r.Header.Get(tt.keyHeader))
					w.WriteHeader(429)
				}
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "results.csv")
			code, stdout, stderr := runCLI(context.Background(), "burst", "--api", tt.api, "--url", srv.URL+tt.path, "--model", canaryModel,
				"--size", "6", "--max-in-flight", "1", "-o", out, "--quiet")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if len(wrong) > 0 {
				t.Fatalf("requests: %v", wrong)
			}
			var oks, waits, redacted int
			for _, r := range readResults(t, out) {
				switch {
				case r.Status == 200:
					oks++
					if r.PromptTokens != tt.prompt || r.CompletionTokens != tt.completion {
						t.Errorf("usage %+v", r)
					}
				case r.Status == 429 && r.WaitMS == 2000:
					waits++
				case r.Status == 429 && r.RetryAfterMS == client.Redacted && r.RetryAfter == client.Redacted && r.WaitSource == results.WaitInvalid:
					redacted++
				default:
					t.Errorf("row %+v", r)
				}
			}
			if oks != 2 || waits != 2 || redacted != 2 {
				t.Fatalf("200s %d, waits %d, redacted %d; want 2 each", oks, waits, redacted)
			}
			assertNoSecrets(t, srv.URL, stdout, stderr, out)
			for _, where := range []string{stdout, stderr, readFile(t, out)} {
				if strings.Contains(where, canaryModel) {
					t.Errorf("the model is in the output: %q", where)
				}
			}
		})
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestNewAPIsBadInput: every refusal of the new APIs' settings is one
// line naming the flag, exit 2, before any request, and repeats no key,
// model or host.
func TestNewAPIsBadInput(t *testing.T) {
	t.Parallel()
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { sent.Add(1) }))
	defer srv.Close()
	an := srv.URL + "/v1/messages"
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"--api", "claude", "--url", an}, "--api must be azure, openai, anthropic, gemini, responses or raw"},
		{[]string{"--api", "anthropic", "--url", an}, "--model is required for --api anthropic"},
		{[]string{"--api", "anthropic", "--url", srv.URL, "--model", canaryModel}, "--url must be the full Messages URL"},
		{[]string{"--api", "anthropic", "--url", an, "--model", canaryModel, "--anthropic-version", "latest-" + canaryKey}, "--anthropic-version must be an API version date"},
		{[]string{"--api", "anthropic", "--url", an, "--model", canaryModel, "--max-tokens-field", "max_completion_tokens"},
			"--max-tokens-field must be max_tokens with --api anthropic"},
		{[]string{"--api", "anthropic", "--url", an, "--model", canaryModel, "--api-key-env", "PTUPROBE_SURELY_UNSET"}, "--api-key-env names an environment variable"},
		{[]string{"--api", "gemini", "--url", srv.URL + "/?key=" + canaryKey, "--model", canaryModel}, "--url must not carry a key in its query (key=)"},
		{[]string{"--api", "gemini", "--url", srv.URL + "/v1beta/models/" + canaryModel + ":generateContent", "--model", canaryModel}, "--url must be the base URL"},
		{[]string{"--api", "gemini", "--url", srv.URL}, "--model is required for --api gemini"},
		{[]string{"--api", "gemini", "--url", srv.URL, "--model", "tunedModels/" + canaryModel}, "--model must be a model id"},
		{[]string{"--api", "gemini", "--url", srv.URL, "--model", canaryModel, "--api-key-env", canaryKey}, "--api-key-env names an environment variable"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(context.Background(), append(append([]string{"burst"}, tt.args...), "--quiet")...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || strings.Count(strings.TrimRight(stderr, "\n"), "\n") != 0 || stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tt.args, code, stdout, stderr, tt.want)
		}
		for _, secret := range []string{canaryKey, canaryModel, strings.TrimPrefix(srv.URL, "http://"), "AnthropicVersion", "MaxTokensField", "APIKeyEnv"} {
			if strings.Contains(stderr, secret) {
				t.Errorf("%v: stderr %q holds %q", tt.args, stderr, secret)
			}
		}
	}
	if n := sent.Load(); n != 0 {
		t.Fatalf("%d requests sent by refused commands", n)
	}
}

// TestEveryTargetFieldHasAFlagName: every client.Spec field, and the
// Config fields a client error may name, is rendered as a flag.
func TestEveryTargetFieldHasAFlagName(t *testing.T) {
	t.Parallel()
	fields := []string{"Key", "KeyHeader"}
	spec := reflect.TypeFor[client.Spec]()
	for i := range spec.NumField() {
		fields = append(fields, spec.Field(i).Name)
	}
	for _, f := range fields {
		if _, ok := targetFlagNames[f]; !ok {
			t.Errorf("client field %s has no flag name", f)
		}
	}
}

// TestTargetHelpNamesEveryAPI: the help says which APIs there are and
// where each one's key comes from.
func TestTargetHelpNamesEveryAPI(t *testing.T) {
	t.Parallel()
	_, stdout, _ := runCLI(context.Background(), "burst", "--help")
	for _, want := range []string{"azure, openai, anthropic", "gemini", "raw", "--anthropic-version", client.DefaultAnthropicVersion,
		"ANTHROPIC_API_KEY", "x-api-key", "GEMINI_API_KEY", "x-goog-api-key", "never in the URL", "generativelanguage.googleapis.com"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("burst --help does not say %q", want)
		}
	}
}
