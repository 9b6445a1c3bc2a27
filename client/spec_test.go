package client

import (
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// env is a getenv over a map, so no test touches the process environment.
func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// spec is a valid Spec for api against url with the other fields filled.
func spec(api, url string) Spec {
	s := Spec{API: api, PromptTokens: 100, MaxTokens: 10, Timeout: time.Second}
	switch api {
	case APIAzure:
		s.Endpoint, s.Deployment = url, canaryDepl
	case APIAnthropic:
		s.URL, s.Model = strings.TrimRight(url, "/")+"/v1/messages", canaryModel
	case APIGemini:
		s.URL, s.Model = url, canaryModel
	default:
		s.URL = url
	}
	return s
}

func TestResolve(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	bodyFile := filepath.Join(dir, "body.json")
	if err := os.WriteFile(bodyFile, []byte(`{"from":"file"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// KeyOptional: these cases are about the shape of a request
	// (TestDefaultKeyRequired is about the key).
	base := Spec{PromptTokens: 100, MaxTokens: 10, Timeout: time.Second, MaxConns: 7, KeyOptional: true}
	with := func(f func(*Spec)) Spec { s := base; f(&s); return s }
	tests := []struct {
		name string
		spec Spec
		want Config // compared with the fields Resolve copies unchanged filled from the spec
	}{
		{"endpoint means azure",
			with(func(s *Spec) { s.Endpoint, s.Deployment = "https://h", "d" }),
			Config{API: APIAzure, Endpoint: "https://h", Deployment: "d", KeyHeader: "api-key"}},
		{"url alone means openai",
			with(func(s *Spec) { s.URL = "https://h/v1/chat/completions" }),
			Config{API: APIOpenAI, URL: "https://h/v1/chat/completions", KeyHeader: "Authorization"}},
		{"a body means raw",
			with(func(s *Spec) { s.URL, s.Body = "https://h", `{"a":1}` }),
			Config{API: APIRaw, URL: "https://h", Body: []byte(`{"a":1}`), KeyHeader: "Authorization"}},
		{"a method means raw, upper-cased",
			with(func(s *Spec) { s.URL, s.Method = "https://h", "delete" }),
			Config{API: APIRaw, URL: "https://h", Method: "DELETE", KeyHeader: "Authorization"}},
		{"a header means raw, split and trimmed",
			with(func(s *Spec) { s.URL, s.Headers = "https://h", []string{" X-A :  1 ", "X-B:", "X-C: a:b"} }),
			Config{API: APIRaw, URL: "https://h", Headers: []Header{{"X-A", "1"}, {"X-B", ""}, {"X-C", "a:b"}}, KeyHeader: "Authorization"}},
		{"explicit api wins over the guess",
			with(func(s *Spec) { s.API, s.URL, s.Headers = APIOpenAI, "https://h", []string{"X-A: 1"} }),
			Config{API: APIOpenAI, URL: "https://h", Headers: []Header{{"X-A", "1"}}, KeyHeader: "Authorization"}},
		{"anthropic asked for",
			with(func(s *Spec) {
				s.API, s.URL, s.Model, s.AnthropicVersion, s.Stream = APIAnthropic, "https://h/v1/messages", "m", "2026-10-21", true
			}),
			Config{API: APIAnthropic, URL: "https://h/v1/messages", Model: "m", AnthropicVersion: "2026-10-21", Stream: true, KeyHeader: "x-api-key"}},
		{"gemini asked for",
			with(func(s *Spec) { s.API, s.URL, s.Model = APIGemini, "https://h", "m" }),
			Config{API: APIGemini, URL: "https://h", Model: "m", KeyHeader: "x-goog-api-key"}},
		{"body from a file",
			with(func(s *Spec) { s.URL, s.Body = "https://h", "@"+bodyFile }),
			Config{API: APIRaw, URL: "https://h", Body: []byte(`{"from":"file"}`), KeyHeader: "Authorization"}},
		{"numbers and switches carried over",
			with(func(s *Spec) {
				s.URL, s.Model, s.SharedPrefixTokens, s.MaxTokensField, s.Stream = "https://h", "m", 5, "max_completion_tokens", true
			}),
			Config{API: APIOpenAI, URL: "https://h", Model: "m", SharedPrefixTokens: 5, MaxTokensField: "max_completion_tokens", Stream: true, KeyHeader: "Authorization"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := Resolve(tt.spec, env(nil))
			if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			want.PromptTokens, want.MaxTokens, want.Timeout, want.MaxConns = base.PromptTokens, base.MaxTokens, base.Timeout, base.MaxConns
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Resolve =\n%+v\nwant\n%+v", got, want)
			}
			if _, err := New(got); err != nil {
				t.Fatalf("New refuses what Resolve made: %v", err)
			}
		})
	}
}

// Canaries: every input that may hold a secret or a private name carries
// one, and no error may repeat any of them.
const (
	canaryHost   = "canary-host.example"
	canaryDepl   = "canary-deployment"
	canaryKey    = "canary-key-value"
	canaryHeader = "canary-header-value"
	canaryBody   = "canary-body-text"
	canaryModel  = "canary-model-name"
)

var canaries = []string{canaryHost, canaryDepl, canaryKey, canaryHeader, canaryBody, canaryModel, "canary"}

// canaryEnv sets every key variable, plus one with a broken key.
var canaryEnv = env(map[string]string{
	envAzureKey: canaryKey, envAzureADToken: canaryKey, envOpenAIKey: canaryKey, envAnthropicKey: canaryKey, envGeminiKey: canaryKey,
	"CANARY_KEY": canaryKey, "CANARY_KEY_BROKEN": canaryKey + "\r\nX-Evil: " + canaryKey,
})

func TestResolveErrorsAreTypedAndKeepSecrets(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, canaryBody+"-big.json")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	// Sparse: one byte over the limit costs no disk.
	if err := f.Truncate(MaxBodyFileBytes + 1); err != nil {
		t.Fatal(err)
	}
	f.Close()
	braces := filepath.Join(dir, "{Endpoint}")
	if err := os.Mkdir(braces, 0o700); err != nil {
		t.Fatal(err)
	}
	az := func(f func(*Spec)) Spec {
		s := spec(APIAzure, "https://"+canaryHost)
		s.Headers = []string{"X-Secret: " + canaryHeader}
		f(&s)
		return s
	}
	raw := func(f func(*Spec)) Spec {
		s := spec(APIRaw, "https://"+canaryHost+"/x")
		s.Body = canaryBody
		s.Headers = []string{"X-Secret: " + canaryHeader}
		f(&s)
		return s
	}
	tests := []struct {
		name  string
		spec  Spec
		field string
	}{
		{"timeout zero", az(func(s *Spec) { s.Timeout = 0 }), "Timeout"},
		{"timeout negative", az(func(s *Spec) { s.Timeout = -time.Second }), "Timeout"},
		{"unknown api", az(func(s *Spec) { s.API = "grpc-" + canaryKey }), "API"},
		{"body with azure", az(func(s *Spec) { s.Body = canaryBody }), "Body"},
		{"body with openai", raw(func(s *Spec) { s.API = APIOpenAI }), "Body"},
		{"body file missing", raw(func(s *Spec) { s.Body = "@" + filepath.Join(dir, canaryBody) }), "Body"},
		{"body file a directory", raw(func(s *Spec) { s.Body = "@" + dir }), "Body"},
		{"body file with braces in its path", raw(func(s *Spec) { s.Body = "@" + braces }), "Body"},
		{"body file too large", raw(func(s *Spec) { s.Body = "@" + big }), "Body"},
		{"header without a colon", raw(func(s *Spec) { s.Headers = append(s.Headers, canaryHeader) }), "Headers"},
		{"header without a name", raw(func(s *Spec) { s.Headers = append(s.Headers, ": "+canaryHeader) }), "Headers"},
		{"named key variable unset", az(func(s *Spec) { s.APIKeyEnv = "CANARY_UNSET" }), "APIKeyEnv"},
		{"key pasted where its name belongs", raw(func(s *Spec) { s.APIKeyEnv = canaryKey }), "APIKeyEnv"},
		{"body with anthropic", raw(func(s *Spec) { s.API = APIAnthropic }), "Body"},
		{"body with gemini", raw(func(s *Spec) { s.API = APIGemini }), "Body"},
		{"anthropic named key variable unset", az(func(s *Spec) { s.API, s.APIKeyEnv = APIAnthropic, "CANARY_UNSET" }), "APIKeyEnv"},
		{"gemini key pasted where its name belongs", az(func(s *Spec) { s.API, s.APIKeyEnv = APIGemini, canaryKey }), "APIKeyEnv"},
		{"unknown api close to a new one", az(func(s *Spec) { s.API = "Anthropic" }), "API"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Resolve(tt.spec, canaryEnv)
			checkSettingError(t, err, tt.field)
		})
	}
}

// checkSettingError asserts err is a *valid.Error for field, in words
// without flags and without any canary, however it is rendered.
func checkSettingError(t *testing.T, err error, field string) {
	t.Helper()
	var ve *valid.Error
	if !errors.As(err, &ve) {
		t.Fatalf("error %v (%T) is not a *valid.Error", err, err)
	}
	if ve.Field() != field {
		t.Errorf("error names field %s, want %s (%v)", ve.Field(), field, err)
	}
	flagged := ve.Render(func(f string) string { return "--" + strings.ToLower(f) })
	for _, text := range []string{err.Error(), flagged} {
		for _, c := range canaries {
			if strings.Contains(strings.ToLower(text), c) {
				t.Errorf("error %q leaks %q", text, c)
			}
		}
	}
	if strings.Contains(err.Error(), "--") {
		t.Errorf("error %q speaks of flags", err)
	}
	if strings.Count(flagged, "--") != 1+strings.Count(ve.Reason, "{") {
		t.Errorf("rendered %q: a brace in the reason did not come from a field", flagged)
	}
}

func TestBodyFileLimit(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		size int64
		ok   bool
	}{{0, true}, {1, true}, {MaxBodyFileBytes, true}, {MaxBodyFileBytes + 1, false}} {
		t.Run(strconv.FormatInt(tt.size, 10), func(t *testing.T) {
			t.Parallel()
			// Sparse files: the sizes cost no disk.
			name := filepath.Join(t.TempDir(), "body")
			f, err := os.Create(name)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.Truncate(tt.size); err != nil {
				t.Fatal(err)
			}
			f.Close()
			b, err := readBodyFile(name)
			if !tt.ok {
				checkSettingError(t, err, "Body")
				return
			}
			if err != nil || int64(len(b)) != tt.size {
				t.Fatalf("got %d bytes, %v", len(b), err)
			}
		})
	}
}

// TestKeyOnTheWire resolves a key from a fake environment and checks the
// headers a real server receives, and that no key is in the URL.
func TestKeyOnTheWire(t *testing.T) {
	t.Parallel()
	all := map[string]string{envAzureKey: "az-key", envAzureADToken: "ad-token", envOpenAIKey: "oa-key",
		envAnthropicKey: "an-key", envGeminiKey: "ge-key", "GOOGLE_API_KEY": "go-key", "MY_KEY": "my-key"}
	only := func(names ...string) map[string]string {
		m := map[string]string{}
		for _, n := range names {
			m[n] = all[n]
		}
		return m
	}
	tests := []struct {
		name   string
		api    string
		keyEnv string
		env    map[string]string
		header string // the one key header sent, "" for none
		value  string
	}{
		{"azure api key", APIAzure, "", only(envAzureKey), "Api-Key", "az-key"},
		{"azure AD token as Bearer", APIAzure, "", only(envAzureADToken), "Authorization", "Bearer ad-token"},
		{"azure api key wins over AD token", APIAzure, "", only(envAzureKey, envAzureADToken), "Api-Key", "az-key"},
		{"azure named variable as api-key", APIAzure, "MY_KEY", all, "Api-Key", "my-key"},
		{"azure named variable beside an AD token", APIAzure, "MY_KEY", only("MY_KEY", envAzureADToken), "Api-Key", "my-key"},
		{"azure without a key", APIAzure, "", only(envOpenAIKey), "", ""},
		{"openai Bearer", APIOpenAI, "", only(envOpenAIKey, envAzureKey), "Authorization", "Bearer oa-key"},
		{"openai named variable", APIOpenAI, "MY_KEY", all, "Authorization", "Bearer my-key"},
		{"openai without a key", APIOpenAI, "", only(envAzureKey, envAzureADToken), "", ""},
		{"anthropic x-api-key", APIAnthropic, "", all, "X-Api-Key", "an-key"},
		{"anthropic named variable", APIAnthropic, "MY_KEY", all, "X-Api-Key", "my-key"},
		{"anthropic without a key", APIAnthropic, "", only(envOpenAIKey, envGeminiKey), "", ""},
		{"gemini x-goog-api-key", APIGemini, "", all, "X-Goog-Api-Key", "ge-key"},
		{"gemini named variable", APIGemini, "GOOGLE_API_KEY", all, "X-Goog-Api-Key", "go-key"},
		{"gemini does not read GOOGLE_API_KEY unasked", APIGemini, "", only("GOOGLE_API_KEY", envAnthropicKey), "", ""},
		{"raw named variable", APIRaw, "MY_KEY", all, "Authorization", "Bearer my-key"},
		{"raw sends no key by default", APIRaw, "", all, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, seen := recordingServer(t, http.StatusOK)
			s := spec(tt.api, srv.URL)
			s.APIKeyEnv = tt.keyEnv
			s.KeyOptional = tt.header == "" // else TestDefaultKeyRequired's refusal
			cfg, err := Resolve(s, env(tt.env))
			if err != nil {
				t.Fatal(err)
			}
			tg, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			if r := send(tg); r.Status != http.StatusOK {
				t.Fatalf("status %d, error %q", r.Status, r.Error)
			}
			got := <-seen
			for _, h := range []string{"Api-Key", "Authorization", "X-Api-Key", "X-Goog-Api-Key"} {
				want := ""
				if h == tt.header {
					want = tt.value
				}
				if v := got.header.Get(h); v != want {
					t.Errorf("%s %q, want %q", h, v, want)
				}
			}
			for _, v := range all {
				if strings.Contains(got.url.String(), v) {
					t.Errorf("the URL %s holds a key", got.url)
				}
			}
		})
	}
}

// TestDefaultKeyRequired: an API whose default key variable is unset is
// refused, naming the variable and APIKeyEnv, unless KeyOptional; raw
// needs no key.
func TestDefaultKeyRequired(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ api, want string }{
		{APIAzure, "APIKeyEnv is not given and AZURE_OPENAI_API_KEY (or AZURE_OPENAI_AD_TOKEN) is unset or empty: set it, or give APIKeyEnv the name of the variable that holds the key"},
		{APIOpenAI, "APIKeyEnv is not given and OPENAI_API_KEY is unset"},
		{APIAnthropic, "APIKeyEnv is not given and ANTHROPIC_API_KEY is unset"},
		{APIGemini, "APIKeyEnv is not given and GEMINI_API_KEY is unset"},
		{APIRaw, ""},
	} {
		s := spec(tt.api, "https://"+canaryHost)
		_, err := Resolve(s, env(map[string]string{"OTHER_KEY": canaryKey}))
		var v *valid.Error
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v, want no error", tt.api, err)
		case tt.want != "" && (!errors.As(err, &v) || v.Field() != "APIKeyEnv" || !strings.HasPrefix(err.Error(), tt.want)):
			t.Errorf("%s: %v, want %q…", tt.api, err, tt.want)
		}
		s.KeyOptional = true
		if cfg, err := Resolve(s, env(nil)); err != nil || cfg.Key != "" {
			t.Errorf("%s KeyOptional: key %q, %v; want no key, no error", tt.api, cfg.Key, err)
		}
		s.KeyOptional, s.APIKeyEnv = true, "CANARY_UNSET"
		if _, err := Resolve(s, env(nil)); !errors.As(err, &v) || v.Field() != "APIKeyEnv" {
			t.Errorf("%s KeyOptional with a named variable unset: %v, want the APIKeyEnv refusal", tt.api, err)
		}
	}
}

// TestBlankKeyIsEmpty: a key variable of only white space is an empty
// one, refused (or passed over, or not sent with KeyOptional) as if
// unset; a key with white space around it is sent without it.
func TestBlankKeyIsEmpty(t *testing.T) {
	t.Parallel()
	const blank = " \t\r\n "
	tests := []struct {
		name   string
		api    string
		keyEnv string
		env    map[string]string
		opt    bool   // KeyOptional
		key    string // the key sent; "" for none
		header string
		fail   bool // refused for APIKeyEnv
	}{
		{"azure blank", APIAzure, "", map[string]string{envAzureKey: " "}, false, "", "", true},
		{"azure blank beside an AD token", APIAzure, "", map[string]string{envAzureKey: blank, envAzureADToken: "ad-token"}, false, "ad-token", "Authorization", false},
		{"azure blank AD token", APIAzure, "", map[string]string{envAzureKey: "", envAzureADToken: blank}, false, "", "", true},
		{"openai blank", APIOpenAI, "", map[string]string{envOpenAIKey: blank}, false, "", "", true},
		{"openai blank, optional", APIOpenAI, "", map[string]string{envOpenAIKey: blank}, true, "", "Authorization", false},
		{"anthropic blank", APIAnthropic, "", map[string]string{envAnthropicKey: blank}, false, "", "", true},
		{"gemini blank", APIGemini, "", map[string]string{envGeminiKey: blank}, false, "", "", true},
		{"named blank", APIRaw, "MY_KEY", map[string]string{"MY_KEY": blank}, true, "", "", true},
		{"padded key", APIAzure, "", map[string]string{envAzureKey: " az-key\n"}, false, "az-key", "api-key", false},
		{"padded named key", APIOpenAI, "MY_KEY", map[string]string{"MY_KEY": "\tmy-key \r\n"}, false, "my-key", "Authorization", false},
	}
	for _, tt := range tests {
		s := spec(tt.api, "https://"+canaryHost)
		s.APIKeyEnv, s.KeyOptional = tt.keyEnv, tt.opt
		cfg, err := Resolve(s, env(tt.env))
		var v *valid.Error
		switch {
		case tt.fail:
			if !errors.As(err, &v) || v.Field() != "APIKeyEnv" {
				t.Errorf("%s: %v, want the APIKeyEnv refusal", tt.name, err)
			}
		case err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case cfg.Key != tt.key || cfg.KeyHeader != tt.header && tt.header != "":
			t.Errorf("%s: key %q in %s, want %q in %s", tt.name, cfg.Key, cfg.KeyHeader, tt.key, tt.header)
		}
	}
}

func TestResolveDefaultsToProcessEnvironment(t *testing.T) {
	// Not parallel: it sets a process environment variable.
	t.Setenv("PTUPROBE_TEST_KEY", "from-os")
	s := spec(APIOpenAI, "https://h")
	s.APIKeyEnv = "PTUPROBE_TEST_KEY"
	cfg, err := Resolve(s, nil)
	if err != nil || cfg.Key != "from-os" {
		t.Fatalf("Resolve with nil getenv: key %q, %v", cfg.Key, err)
	}
}
