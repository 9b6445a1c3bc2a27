package client

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/hostile"
	"github.com/ptuprobe/ptuprobe/results"
)

// Echo canaries: a key longer than a recorded value (so a cut would keep a
// prefix of it), a short key, a header value, and a URL query value.
var (
	echoKey      = "sk-echo-canary-" + strings.Repeat("7Qx9Lm2Vb8Rt", 8) // 111 bytes
	echoShortKey = "sk-ec0ary"                                           // 9 bytes: matched whole
	echoHeader   = "hdr-echo-canary-ZpW3Kd9FqY1s"
	echoQuery    = "query-echo-canary-Hn4Tr8Jc"
)

func TestSecretsLeaks(t *testing.T) {
	t.Parallel()
	s := newSecrets(&Config{Key: echoKey, URL: "https://h/v1?key=" + echoQuery + "&v=2024",
		Headers: []Header{{"X-Secret", echoHeader}, {"X-Flag", "1"}, {"X-Mode", "fast"}, {"X-Short", echoShortKey}}})
	tests := []struct {
		name  string
		value string
		leaks bool
	}{
		{"ordinary wait", "43", false},
		{"ordinary date", "Wed, 21 Oct 2015 07:28:00 GMT", false},
		{"a short header value is no secret", "1", false},
		{"nor is a short word", "fast", false},
		{"the key whole", echoKey, true},
		{"the key as a bearer token", "Bearer " + echoKey, true},
		{"the first 64 bytes of the key", echoKey[:64], true},
		{"the key after 70 bytes, beyond the cut", strings.Repeat("1", 70) + echoKey, true},
		{"12 bytes from the middle of the key", "7 " + echoKey[50:62] + " s", true},
		{"11 bytes of the key are not a leak", "7 " + echoKey[50:61] + " s", false},
		{"the key split by tabs, which cleaning drops", echoKey[:20] + "\t\t" + echoKey[20:40], true},
		{"the key split by a C1 control", echoKey[:8] + "\u0085" + echoKey[8:20], true},
		{"the key split by a space is still 12 bytes of it", echoKey[:10] + " " + echoKey[10:22], true},
		{"a header value", "id=" + echoHeader, true},
		{"a query value", echoQuery, true},
		{"a short secret whole", "x" + echoShortKey + "x", true},
		{"a short secret in part", echoShortKey[:8], false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := s.leaks(tt.value); got != tt.leaks {
				t.Fatalf("leaks = %v, want %v", got, tt.leaks)
			}
		})
	}
}

// TestEchoedSecretsNeverReachTheFile: targets that echo the key or a
// header value, whole or in part, get rows whose retry headers read
// Redacted, and the results file holds neither any canary nor any 12 bytes
// of one.
func TestEchoedSecretsNeverReachTheFile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     Config
		echo    []string // the request headers the server echoes
		canary  string
		waitSrc string
	}{
		{"azure api-key", Config{API: APIAzure, Deployment: "d", Key: echoKey}, nil, echoKey, results.WaitInvalid},
		{"bearer token", Config{API: APIOpenAI, Key: echoKey}, nil, echoKey, results.WaitInvalid},
		{"short key", Config{API: APIAzure, Deployment: "d", Key: echoShortKey}, nil, echoShortKey, results.WaitInvalid},
		{"header value", Config{API: APIRaw, Headers: []Header{{"X-Secret", echoHeader}}}, []string{"X-Secret"}, echoHeader, results.WaitInvalid},
		{"anthropic x-api-key", Config{API: APIAnthropic, Model: "m", Key: echoKey}, []string{"x-api-key"}, echoKey, results.WaitInvalid},
		{"gemini x-goog-api-key", Config{API: APIGemini, Model: "m", Key: echoKey, Stream: true}, []string{"x-goog-api-key"}, echoKey, results.WaitInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, err := hostile.Start(hostile.Config{Mode: hostile.EchoKey, EchoHeaders: tt.echo})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			cfg := tt.cfg
			cfg.PromptTokens, cfg.MaxTokens, cfg.Timeout = 10, 1, 5*time.Second
			switch cfg.API {
			case APIAzure:
				cfg.Endpoint = srv.URL()
			case APIAnthropic:
				cfg.URL = srv.URL() + "/v1/messages"
			case APIGemini:
				cfg.URL = srv.URL()
			default:
				cfg.URL = srv.URL() + "/v1/chat/completions"
			}
			tg, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			path := filepath.Join(t.TempDir(), "results.csv")
			w, err := results.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			for seq := range 3 {
				r := results.Blank()
				sendOne(t.Context(), tg, seq, &r)
				if r.Status != 429 || r.RetryAfterMS != Redacted || r.RetryAfter != Redacted || r.WaitSource != tt.waitSrc || r.WaitMS != results.None {
					t.Errorf("row %+v, want both retry headers %s", r, Redacted)
				}
				if err := w.Write(&r); err != nil {
					t.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if srv.Requests() != 3 {
				t.Fatalf("the server answered %d requests, want 3", srv.Requests())
			}
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if leak := leakedPart(file, tt.canary); leak != "" {
				t.Fatalf("the results file holds %q of the secret:\n%s", leak, file)
			}
		})
	}
}

// leakedPart returns the part of secret found in b: the whole secret, or
// for one of at least secretWindow bytes any secretWindow bytes of it.
func leakedPart(b []byte, secret string) string {
	if bytes.Contains(b, []byte(secret)) {
		return secret
	}
	for i := 0; i+secretWindow <= len(secret); i++ {
		if w := secret[i : i+secretWindow]; bytes.Contains(b, []byte(w)) {
			return w
		}
	}
	return ""
}

// FuzzSecretsAgreeWithCleanHeader holds secrets.leaks to what
// results.CleanHeader records: a value that passes the check never puts a
// secret, or secretWindow bytes of one, into the recorded value.
func FuzzSecretsAgreeWithCleanHeader(f *testing.F) {
	f.Add("sk-0123456789abcdef", "Bearer sk-0123456789abcdef")
	f.Add("sk-0123456789abcdef", "1\t sk-01234\x0056789abc")
	f.Add("short-k3y", "xshort-k3yx")
	f.Add("key\xff\xfe-0123456789", "\xff\xfe-0123456789")
	f.Fuzz(func(t *testing.T, secret, value string) {
		s := newSecrets(&Config{Key: secret})
		if s.leaks(value) {
			return
		}
		got := results.CleanHeader(value)
		clean := recordable(secret)
		switch {
		case len(clean) < minSecretLen:
		case len(clean) < secretWindow:
			if strings.Contains(got, clean) {
				t.Fatalf("secret %q recorded in %q from %q", clean, got, value)
			}
		default:
			if leak := leakedPart([]byte(got), clean); leak != "" {
				t.Fatalf("%q of secret %q recorded in %q from %q", leak, clean, got, value)
			}
		}
	})
}

// TestNumericSecretIsNotRecordedAsANumber: a key of digits echoed in the
// headers that are recorded as numbers is neither a wait nor a count.
func TestNumericSecretIsNotRecordedAsANumber(t *testing.T) {
	t.Parallel()
	const key = "123456789012"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		k := r.Header.Get("api-key")
		w.Header().Set("retry-after-ms", k)
		w.Header().Set("x-ratelimit-remaining-requests", k)
		w.Header().Set("x-ratelimit-remaining-tokens", "900")
		w.Header().Set("azure-openai-deployment-utilization", k+"%")
		w.WriteHeader(429)
	}))
	defer srv.Close()
	tg, err := New(Config{API: APIAzure, Endpoint: srv.URL, Deployment: "d", Key: key, PromptTokens: 10, MaxTokens: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	r := send(tg)
	if r.RetryAfterMS != Redacted || r.WaitSource != results.WaitInvalid || r.WaitMS != results.None ||
		r.RatelimitRemainingRequests != results.None || r.UtilizationPct != results.None || r.RatelimitRemainingTokens != 900 {
		t.Fatalf("row %+v", r)
	}
}
