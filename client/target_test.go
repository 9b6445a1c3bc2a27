package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// newAzure is a Target on url whose timeout only bounds a hang: its tests
// judge an answer's class and fields, never its time (a test of the
// timeout sets its own). 2 s was missed by a TLS handshake under the race
// detector at load 7 (round 15: TestUntrustedCertificateIsTLS, timeout
// instead of tls, 1 run in 5).
func newAzure(t *testing.T, url string) *Target {
	t.Helper()
	tg, err := New(Config{API: APIAzure, Endpoint: url, Deployment: "canary-deployment", Key: "sk-canary", KeyHeader: "api-key",
		PromptTokens: 200, MaxTokens: 50, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tg.Close)
	return tg
}

func send(tg *Target) results.Record {
	r := results.Blank()
	sendOne(context.Background(), tg, 7, &r)
	return r
}

func TestSendScriptedResponses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		handler http.HandlerFunc
		check   func(t *testing.T, r results.Record)
	}{
		{"429 retry-after-ms", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("retry-after-ms", "43.5")
			w.Header().Set("retry-after", "1")
			w.Header().Set("x-ratelimit-remaining-requests", "0")
			w.Header().Set("x-ratelimit-remaining-tokens", "1200")
			w.Header().Set("azure-openai-deployment-utilization", "104.2%")
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.Status != 429 || r.WaitMS != 43.5 || r.WaitSource != results.WaitRetryAfterMS || r.RetryAfter != "1" {
				t.Fatalf("%+v", r)
			}
			if r.RatelimitRemainingRequests != 0 || r.RatelimitRemainingTokens != 1200 || r.UtilizationPct != 104.2 {
				t.Fatalf("headers: %+v", r)
			}
		}},
		{"429 seconds only", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("retry-after", "17")
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != 17000 || r.WaitSource != results.WaitRetryAfterSeconds {
				t.Fatalf("%+v", r)
			}
		}},
		{"429 http-date", func(w http.ResponseWriter, r *http.Request) {
			now := time.Now().UTC()
			w.Header().Set("Date", now.Format(http.TimeFormat))
			w.Header().Set("retry-after", now.Add(9*time.Second).Format(http.TimeFormat))
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != 9000 || r.WaitSource != results.WaitRetryAfterDate {
				t.Fatalf("%+v", r)
			}
		}},
		{"429 garbage headers", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("retry-after-ms", "soon-ish")
			w.Header().Set("retry-after", "later")
			w.Header().Set("x-ratelimit-remaining-requests", "lots")
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != results.None || r.WaitSource != results.WaitInvalid || r.RetryAfterMS != "soon-ish" || r.RatelimitRemainingRequests != results.None {
				t.Fatalf("%+v", r)
			}
		}},
		// A header repeated with different values is unusable, like one
		// that is not a number; identical repeats are one value.
		{"429 repeated retry-after-ms that differ", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("retry-after-ms", "10")
			w.Header().Add("retry-after-ms", "20000")
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != results.None || r.WaitSource != results.WaitInvalid || r.RetryAfterMS != "10, 20000" {
				t.Fatalf("%+v", r)
			}
		}},
		{"429 repeated retry-after-ms that differ, retry-after usable", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("retry-after-ms", "10")
			w.Header().Add("retry-after-ms", "20000")
			w.Header().Set("retry-after", "2")
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != 2000 || r.WaitSource != results.WaitRetryAfterSeconds || r.RetryAfterMS != "10, 20000" {
				t.Fatalf("%+v", r)
			}
		}},
		{"429 repeated retry-after-ms that agree", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Add("retry-after-ms", "43")
			w.Header().Add("retry-after-ms", " 43 ")
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != 43 || r.WaitSource != results.WaitRetryAfterMS || r.RetryAfterMS != "43" {
				t.Fatalf("%+v", r)
			}
		}},
		{"429 repeated retry-after dates that differ", func(w http.ResponseWriter, r *http.Request) {
			now := time.Now().UTC()
			w.Header().Add("retry-after", now.Add(3*time.Second).Format(http.TimeFormat))
			w.Header().Add("retry-after", now.Add(9*time.Second).Format(http.TimeFormat))
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != results.None || r.WaitSource != results.WaitInvalid || strings.Count(r.RetryAfter, "GMT") != 2 {
				t.Fatalf("%+v", r)
			}
		}},
		{"429 repeated retry-after dates that agree", func(w http.ResponseWriter, r *http.Request) {
			now := time.Now().UTC()
			w.Header().Set("Date", now.Format(http.TimeFormat))
			w.Header().Add("retry-after", now.Add(9*time.Second).Format(http.TimeFormat))
			w.Header().Add("retry-after", now.Add(9*time.Second).Format(http.TimeFormat))
			w.WriteHeader(429)
		}, func(t *testing.T, r results.Record) {
			if r.WaitMS != 9000 || r.WaitSource != results.WaitRetryAfterDate {
				t.Fatalf("%+v", r)
			}
		}},
		{"429 no headers", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(429) },
			func(t *testing.T, r results.Record) {
				if r.WaitSource != results.WaitNone || r.Error != "" {
					t.Fatalf("%+v", r)
				}
			}},
		{"503", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(503) },
			func(t *testing.T, r results.Record) {
				if r.Status != 503 || r.Error != "" || r.LatencyMS < 0 || r.TTFBMS < 0 {
					t.Fatalf("%+v", r)
				}
			}},
		{"200 with usage and spillover", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("x-ms-spillover-from-deployment", "ptu")
			io.WriteString(w, `{"id":"x","usage":{"prompt_tokens":1200,"completion_tokens":80,"prompt_tokens_details":{"cached_tokens":1024}}}`)
		}, func(t *testing.T, r results.Record) {
			if r.Status != 200 || r.PromptTokens != 1200 || r.CompletionTokens != 80 || r.CachedTokens != 1024 || !r.Spillover || r.MaxTokens != 50 {
				t.Fatalf("%+v", r)
			}
		}},
		{"200 stream with usage chunk", func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "data: {\"choices\":[]}\n\ndata: {\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}\n\ndata: [DONE]\n\n")
		}, func(t *testing.T, r results.Record) {
			if r.PromptTokens != 5 || r.CompletionTokens != 6 {
				t.Fatalf("%+v", r)
			}
		}},
		{"200 not json", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "<html>") },
			func(t *testing.T, r results.Record) {
				if r.Status != 200 || r.PromptTokens != results.None {
					t.Fatalf("%+v", r)
				}
			}},
		{"reset", func(w http.ResponseWriter, r *http.Request) {
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		}, func(t *testing.T, r results.Record) {
			if r.Status != 0 || r.Error != results.ClassReset {
				t.Fatalf("%+v", r)
			}
		}},
		{"body cut short", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "1000")
			w.WriteHeader(200)
			io.WriteString(w, "{")
			w.(http.Flusher).Flush()
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		}, func(t *testing.T, r results.Record) {
			if r.Status != 200 || (r.Error != results.ClassReset && r.Error != results.ClassBody) {
				t.Fatalf("%+v", r)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			tt.check(t, send(newAzure(t, srv.URL)))
		})
	}
}

// TestTimeout runs in a synctest bubble over an in-memory connection, so
// the client's real timeout passes on the bubble's clock, at once and
// exactly.
func TestTimeout(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		answer string // what the server writes before it stalls
		status int
	}{
		{"no headers", "", 0},
		{"headers, then the body stalls", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				srvConn, cliConn := net.Pipe()
				go func() {
					defer srvConn.Close()
					br := bufio.NewReader(srvConn)
					req, err := http.ReadRequest(br)
					if err != nil {
						return
					}
					io.Copy(io.Discard, req.Body)
					io.WriteString(srvConn, tt.answer)
					io.Copy(io.Discard, br) // until the client hangs up
				}()
				tg, err := New(Config{API: APIAzure, Endpoint: "http://pipe", Deployment: "d", PromptTokens: 10, MaxTokens: 1,
					DialContext: func(context.Context, string, string) (net.Conn, error) { return cliConn, nil }})
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				r := send(tg)
				if r.Error != results.ClassTimeout || r.Status != tt.status || r.LatencyMS != float64(DefaultTimeout/time.Millisecond) {
					t.Fatalf("%+v, want error timeout, status %d, latency %v", r, tt.status, DefaultTimeout)
				}
			})
		})
	}
}

// received is what a test server saw of one request.
type received struct {
	method string
	url    *url.URL
	header http.Header
	body   []byte
}

// recordingServer answers every request with status and hands what it saw
// to the test through the channel, so the test reads it after Send with
// no data race.
func recordingServer(t *testing.T, status int) (*httptest.Server, <-chan received) {
	t.Helper()
	seen := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		seen <- received{r.Method, r.URL, r.Header.Clone(), body}
		w.WriteHeader(status)
	}))
	t.Cleanup(srv.Close)
	return srv, seen
}

func TestRequestShape(t *testing.T) {
	t.Parallel()
	srv, seen := recordingServer(t, http.StatusOK)
	tg := newAzure(t, srv.URL+"/")
	send(tg)
	got := <-seen
	if !bytes.Equal(got.body, tg.Body(7)) {
		t.Fatalf("sent body %q, want Body(7) %q", got.body, tg.Body(7))
	}
	if got.method != "POST" || got.url.Path != "/openai/deployments/canary-deployment/chat/completions" || got.url.Query().Get("api-version") != DefaultAPIVersion {
		t.Fatalf("request %s %s", got.method, got.url)
	}
	if got.header.Get("api-key") != "sk-canary" || got.header.Get("Authorization") != "" {
		t.Fatal("key not sent as api-key")
	}
	if ct, ua := got.header.Get("Content-Type"), got.header.Get("User-Agent"); ct != "application/json" || ua != "ptuprobe" {
		t.Fatalf("Content-Type %q, User-Agent %q", ct, ua)
	}
	var parsed struct {
		Messages  []struct{ Role, Content string }
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(got.body, &parsed); err != nil {
		t.Fatalf("body is not JSON: %v", err)
	}
	if parsed.MaxTokens != 50 || len(parsed.Messages) != 1 || parsed.Messages[0].Role != "user" {
		t.Fatalf("body %+v", parsed)
	}
	if n := len(parsed.Messages[0].Content); n < 790 || n > 810 {
		t.Fatalf("prompt of %d chars, want about 200 tokens × 4", n)
	}
}

// TestPromptAtTheBounds: the largest prompt and completion allowed build
// a request of about MaxPromptTokens × CharsPerToken bytes.
func TestPromptAtTheBounds(t *testing.T) {
	t.Parallel()
	tg, err := New(Config{API: APIOpenAI, URL: "http://127.0.0.1:1/v1/chat/completions", PromptTokens: MaxPromptTokens,
		SharedPrefixTokens: MaxPromptTokens - 1, MaxTokens: MaxCompletionTokens})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Messages  []struct{ Content string }
		MaxTokens int `json:"max_tokens"`
	}
	if err := json.Unmarshal(tg.Body(1), &body); err != nil {
		t.Fatal(err)
	}
	chars := 0
	for _, m := range body.Messages {
		chars += len(m.Content)
	}
	if want := MaxPromptTokens * CharsPerToken; chars < want-100 || chars > want+100 || body.MaxTokens != MaxCompletionTokens {
		t.Fatalf("a prompt of %d characters and max_tokens %d, want about %d and %d", chars, body.MaxTokens, want, MaxCompletionTokens)
	}
}

func TestPromptsUniqueUnlessSharedPrefix(t *testing.T) {
	t.Parallel()
	tg, err := New(Config{API: APIOpenAI, URL: "http://127.0.0.1:1/v1/chat/completions", Model: "m", PromptTokens: 2000,
		SharedPrefixTokens: 1500, MaxTokens: 10, MaxTokensField: "max_completion_tokens"})
	if err != nil {
		t.Fatal(err)
	}
	type msg struct{ Role, Content string }
	var a, b struct {
		Model    string
		Messages []msg
		Max      int `json:"max_completion_tokens"`
	}
	if err := errors.Join(json.Unmarshal(tg.Body(1), &a), json.Unmarshal(tg.Body(2), &b)); err != nil {
		t.Fatalf("bodies are not JSON: %v", err)
	}
	if a.Model != "m" || a.Max != 10 || len(a.Messages) != 2 || a.Messages[0].Role != "system" {
		t.Fatalf("%+v", a)
	}
	if a.Messages[0].Content != b.Messages[0].Content || len(a.Messages[0].Content) != 6000 {
		t.Fatal("shared prefix differs or has the wrong size")
	}
	if a.Messages[1].Content == b.Messages[1].Content {
		t.Fatal("user messages are not unique")
	}
	if total := len(a.Messages[0].Content) + len(a.Messages[1].Content); total < 7900 || total > 8100 {
		t.Fatalf("prompt of %d chars, want about 8000", total)
	}
}

func TestRefusedAndCanceled(t *testing.T) {
	t.Parallel()
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	tg := newAzure(t, "http://"+addr)
	if r := send(tg); r.Error != results.ClassRefused || r.Status != 0 {
		t.Fatalf("%+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := results.Blank()
	sendOne(ctx, tg, 1, &r)
	if r.Error != results.ClassCanceled {
		t.Fatalf("%+v", r)
	}
}

func TestNewErrorsAreTypedAndKeepSecrets(t *testing.T) {
	t.Parallel()
	host := "https://" + canaryHost
	az := func(f func(*Config)) Config {
		c := Config{API: APIAzure, Endpoint: host, Deployment: canaryDepl, Key: canaryKey,
			Headers: []Header{{"X-Secret", canaryHeader}}, PromptTokens: 10, MaxTokens: 1}
		f(&c)
		return c
	}
	raw := func(f func(*Config)) Config {
		c := Config{API: APIRaw, URL: host + "/x", Key: canaryKey, Body: []byte(canaryBody),
			Headers: []Header{{"X-Secret", canaryHeader}}}
		f(&c)
		return c
	}
	an := func(f func(*Config)) Config {
		c := Config{API: APIAnthropic, URL: host + "/v1/messages", Model: canaryModel, Key: canaryKey,
			Headers: []Header{{"X-Secret", canaryHeader}}, PromptTokens: 10, MaxTokens: 1}
		f(&c)
		return c
	}
	ge := func(f func(*Config)) Config {
		c := Config{API: APIGemini, URL: host, Model: canaryModel, Key: canaryKey,
			Headers: []Header{{"X-Secret", canaryHeader}}, PromptTokens: 10, MaxTokens: 1}
		f(&c)
		return c
	}
	tests := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"anthropic no url", an(func(c *Config) { c.URL = "" }), "URL"},
		{"anthropic base url", an(func(c *Config) { c.URL = host + "/" }), "URL"},
		{"anthropic url with credentials", an(func(c *Config) { c.URL = "https://" + canaryKey + "@" + canaryHost + "/v1/messages" }), "URL"},
		{"anthropic no model", an(func(c *Config) { c.Model = "" }), "Model"},
		{"anthropic version not a date", an(func(c *Config) { c.AnthropicVersion = canaryHeader }), "AnthropicVersion"},
		{"anthropic version with a line break", an(func(c *Config) { c.AnthropicVersion = "2023-06-01\r\nX-Evil: " + canaryKey }), "AnthropicVersion"},
		{"anthropic max_completion_tokens", an(func(c *Config) { c.MaxTokensField = "max_completion_tokens" }), "MaxTokensField"},
		{"anthropic key with a line break", an(func(c *Config) { c.Key = canaryKey + "\n" }), "Key"},
		{"gemini no url", ge(func(c *Config) { c.URL = "" }), "URL"},
		{"gemini key in the query", ge(func(c *Config) { c.URL = host + "?key=" + canaryKey }), "URL"},
		{"gemini key in the query, upper case", ge(func(c *Config) { c.URL = host + "/?alt=json&KEY=" + canaryKey }), "URL"},
		{"gemini key in the query, escaped", ge(func(c *Config) { c.URL = host + "?%6Bey=" + canaryKey }), "URL"},
		{"gemini key in the query, empty", ge(func(c *Config) { c.URL = host + "?key" }), "URL"},
		{"gemini access token in the query", ge(func(c *Config) { c.URL = host + "?access_token=" + canaryKey }), "URL"},
		{"gemini query not well formed", ge(func(c *Config) { c.URL = host + "?a=%zz" + canaryKey }), "URL"},
		{"gemini full url instead of the base", ge(func(c *Config) { c.URL = host + "/v1beta/models/" + canaryModel + ":generateContent" }), "URL"},
		{"gemini stream url instead of the base", ge(func(c *Config) { c.URL = host + "/v1beta/x:streamGenerateContent" }), "URL"},
		{"gemini no model", ge(func(c *Config) { c.Model = "" }), "Model"},
		{"gemini model only models/", ge(func(c *Config) { c.Model = "models/" }), "Model"},
		{"gemini tuned model path", ge(func(c *Config) { c.Model = "tunedModels/" + canaryModel }), "Model"},
		{"gemini model with a colon", ge(func(c *Config) { c.Model = canaryModel + ":streamGenerateContent" }), "Model"},
		{"gemini model with a query", ge(func(c *Config) { c.Model = canaryModel + "?key=" + canaryKey }), "Model"},
		{"gemini max_completion_tokens", ge(func(c *Config) { c.MaxTokensField = "max_completion_tokens" }), "MaxTokensField"},
		{"gemini key header not a name", ge(func(c *Config) { c.KeyHeader = "x goog" }), "KeyHeader"},
		{"no endpoint", az(func(c *Config) { c.Endpoint = "" }), "Endpoint"},
		{"no deployment", az(func(c *Config) { c.Deployment = "" }), "Deployment"},
		{"endpoint not http", az(func(c *Config) { c.Endpoint = "ftp://" + canaryHost }), "Endpoint"},
		{"endpoint without scheme", az(func(c *Config) { c.Endpoint = canaryHost }), "Endpoint"},
		{"endpoint unparsable", az(func(c *Config) { c.Endpoint = "http://" + canaryHost + "/%zz" }), "Endpoint"},
		{"endpoint with credentials", az(func(c *Config) { c.Endpoint = "https://" + canaryKey + ":pw@" + canaryHost }), "Endpoint"},
		{"endpoint port too large", az(func(c *Config) { c.Endpoint = "http://" + canaryHost + ":99999" }), "Endpoint"},
		{"endpoint port 0", az(func(c *Config) { c.Endpoint = "http://" + canaryHost + ":0" }), "Endpoint"},
		{"endpoint port not a number", az(func(c *Config) { c.Endpoint = "http://" + canaryHost + ":https" }), "Endpoint"},
		{"endpoint without a host name", az(func(c *Config) { c.Endpoint = "http://:8080" }), "Endpoint"},
		{"no url", raw(func(c *Config) { c.URL = "" }), "URL"},
		{"url port too large", raw(func(c *Config) { c.URL = "http://" + canaryHost + ":99999/v1" }), "URL"},
		{"url port past int", raw(func(c *Config) { c.URL = "http://" + canaryHost + ":99999999999999999999999/v1" }), "URL"},
		{"url port 0", raw(func(c *Config) { c.URL = "http://[::1]:0/v1" }), "URL"},
		{"url port negative", raw(func(c *Config) { c.URL = "http://" + canaryHost + ":-1/v1" }), "URL"},
		{"url without scheme", raw(func(c *Config) { c.URL = canaryHost + "/v1" }), "URL"},
		{"url with credentials", raw(func(c *Config) { c.URL = "http://u:" + canaryKey + "@" + canaryHost }), "URL"},
		{"unknown api", az(func(c *Config) { c.API = "grpc" }), "API"},
		{"no api", az(func(c *Config) { c.API = "" }), "API"},
		{"prompt tokens 0", az(func(c *Config) { c.PromptTokens = 0 }), "PromptTokens"},
		{"shared prefix = prompt", az(func(c *Config) { c.SharedPrefixTokens = 10 }), "SharedPrefixTokens"},
		{"shared prefix negative", az(func(c *Config) { c.SharedPrefixTokens = -1 }), "SharedPrefixTokens"},
		{"prompt tokens negative", az(func(c *Config) { c.PromptTokens = -1 }), "PromptTokens"},
		{"prompt tokens over the bound", az(func(c *Config) { c.PromptTokens = MaxPromptTokens + 1 }), "PromptTokens"},
		{"prompt tokens of a terabyte", az(func(c *Config) { c.PromptTokens = 1099511627776 }), "PromptTokens"},
		{"prompt tokens at the largest int", az(func(c *Config) { c.PromptTokens, c.SharedPrefixTokens = math.MaxInt, math.MaxInt-1 }), "PromptTokens"},
		{"max tokens 0", az(func(c *Config) { c.MaxTokens = 0 }), "MaxTokens"},
		{"max tokens over the bound", az(func(c *Config) { c.MaxTokens = MaxCompletionTokens + 1 }), "MaxTokens"},
		{"max tokens at the largest int", az(func(c *Config) { c.MaxTokens = math.MaxInt }), "MaxTokens"},
		{"max tokens field", az(func(c *Config) { c.MaxTokensField = "max_output_tokens" }), "MaxTokensField"},
		{"header name with a space", raw(func(c *Config) { c.Headers = append(c.Headers, Header{"Bad Name", canaryHeader}) }), "Headers"},
		{"header name empty", raw(func(c *Config) { c.Headers = append(c.Headers, Header{"", canaryHeader}) }), "Headers"},
		{"header value with a line break", raw(func(c *Config) {
			c.Headers = append(c.Headers, Header{"X-A", canaryHeader + "\r\nX-Evil: 1"})
		}), "Headers"},
		{"method not a token", raw(func(c *Config) { c.Method = "GET " + canaryHost }), "Method"},
		{"method with a space", raw(func(c *Config) { c.Method = "GE T" }), "Method"},
		{"method with a line break", raw(func(c *Config) { c.Method = "GET\r\n" }), "Method"},
		{"header value with a control character", raw(func(c *Config) { c.Headers = append(c.Headers, Header{"X-A", canaryHeader + "\x01"}) }), "Headers"},
		{"header value with DEL", raw(func(c *Config) { c.Headers = append(c.Headers, Header{"X-A", "\x7f" + canaryHeader}) }), "Headers"},
		{"key with a line break", raw(func(c *Config) { c.Key = canaryKey + "\n" }), "Key"},
		{"key with NUL", az(func(c *Config) { c.Key = canaryKey + "\x00" }), "Key"},
		{"key header not a name", az(func(c *Config) { c.KeyHeader = "api key" }), "KeyHeader"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := New(tt.cfg)
			checkSettingError(t, err, tt.field)
		})
	}
}

// TestURLPortsAccepted: the ports a socket can have, and none (the
// scheme's default), pass checkURL.
func TestURLPortsAccepted(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"http://h", "https://h/", "http://h:1/v1", "http://h:65535/v1", "http://h:080/v1", "http://[::1]:8080/v1", "http://h:/v1"} {
		t.Run(u, func(t *testing.T) {
			t.Parallel()
			if _, err := checkURL("URL", u); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRedirectNotFollowed: a redirect is recorded as the response it is.
// Following it would carry the key (and the prompt) to another host.
func TestRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	for _, code := range []int{301, 302, 303, 307, 308} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			t.Parallel()
			var elsewhere atomic.Int32
			other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				elsewhere.Add(1)
			}))
			defer other.Close()
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("retry-after", "3")
				http.Redirect(w, r, other.URL+r.URL.RequestURI(), code)
			}))
			defer srv.Close()
			r := send(newAzure(t, srv.URL))
			if r.Status != code || r.Error != "" || r.WaitMS != 3000 {
				t.Fatalf("row %+v, want status %d recorded with its headers", r, code)
			}
			// The redirect was answered in full before Send returned, so
			// a follow-up request would have reached other by now.
			if n := elsewhere.Load(); n != 0 {
				t.Fatalf("the redirect target was hit %d times", n)
			}
		})
	}
}

func TestRawTarget(t *testing.T) {
	t.Parallel()
	srv, seen := recordingServer(t, http.StatusNoContent)
	tg, err := New(Config{API: APIRaw, URL: srv.URL, Method: "PUT", Body: []byte(`{"a":1}`), Headers: []Header{{"X-Test", "yes"}, {"X-Test", "again"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	r := send(tg)
	got := <-seen
	if r.Status != 204 || r.MaxTokens != results.None {
		t.Fatalf("row %+v", r)
	}
	if got.method != "PUT" || strings.Join(got.header.Values("X-Test"), ",") != "yes,again" || string(got.body) != `{"a":1}` {
		t.Fatalf("request %s %v %s", got.method, got.header, got.body)
	}
}

func BenchmarkBody(b *testing.B) {
	tg, _ := New(Config{API: APIAzure, Endpoint: "http://127.0.0.1:1", Deployment: "d", PromptTokens: 1000, MaxTokens: 100})
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		_ = tg.Body(i)
	}
}

func TestStreamBodyAndUsageFromSimulator(t *testing.T) {
	t.Parallel()
	tg, err := New(Config{API: APIOpenAI, URL: "http://127.0.0.1:1/v1/chat/completions", Model: "m", PromptTokens: 50, MaxTokens: 20, Stream: true})
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Stream        bool
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(tg.Body(1), &body); err != nil || !body.Stream || !body.StreamOptions.IncludeUsage {
		t.Fatalf("stream body %s: %v", tg.Body(1), err)
	}
}

func TestUntrustedCertificateIsTLS(t *testing.T) {
	t.Parallel()
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	tg := newAzure(t, srv.URL)
	if r := send(tg); r.Error != results.ClassTLS || r.Status != 0 {
		t.Fatalf("%+v", r)
	}
}

// sendOne sends request seq through tg's public Send and fills r with the
// one attempt it records (no retry owner here).
func sendOne(ctx context.Context, tg *Target, seq int, r *results.Record) {
	first := *r
	first.Seq = seq
	n := 0
	tg.Send(ctx, first, time.Now(), ctx, func(got *results.Record) {
		n++
		*r = *got
	})
	if n != 1 {
		panic(fmt.Sprintf("Send recorded %d attempts, want 1", n))
	}
}

// refuse43 answers every request 429 with retry-after-ms 43 (and
// retry-after 1 when withSeconds), in Azure's envelope.
func refuse43(withSeconds bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("retry-after-ms", "43")
		if withSeconds {
			w.Header().Set("retry-after", "1")
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, `{"error":{"code":"429","message":"Requests have exceeded the rate limit."}}`)
	}
}

// benchRefused sends requests of tg to a refuse43 server for b, failing
// on a row that is no 429 (or, with wait, does not advise 43 ms).
func benchRefused(b *testing.B, tg *Target, wait bool) {
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var r results.Record
		sendOne(ctx, tg, i, &r)
		if r.Status != http.StatusTooManyRequests || (wait && r.WaitMS != 43) {
			b.Fatalf("row %+v", r)
		}
	}
}

// BenchmarkSend429 is one request and its row against a loopback server
// answering 429 with retry-after-ms, no retry owner: the client's own
// cost per request (building it, reading the answer and its advice),
// with net/http's.
func BenchmarkSend429(b *testing.B) {
	srv := httptest.NewServer(refuse43(true))
	defer srv.Close()
	tg, err := New(Config{API: APIAzure, Endpoint: srv.URL, Deployment: "d", Key: "k", PromptTokens: 1000, MaxTokens: 100})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	benchRefused(b, tg, true)
}

// TestRawRequestIsOneCopy: a raw target's request is the template's copy
// and its body's reader, no closure of its own (the body's opener is
// built once): three allocations, where it was four.
func TestRawRequestIsOneCopy(t *testing.T) {
	tg, err := New(Config{API: APIRaw, URL: "http://127.0.0.1:1/v1", Method: http.MethodPost, Body: []byte(`{"max_tokens":1}`)})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	ctx := t.Context()
	if n := testing.AllocsPerRun(100, func() { tg.newRequest(ctx, 1) }); n > 3 {
		t.Fatalf("%v allocations a request, want at most 3", n)
	}
	req := tg.newRequest(ctx, 1)
	if b, err := io.ReadAll(req.Body); err != nil || string(b) != `{"max_tokens":1}` || req.ContentLength != int64(len(b)) {
		t.Fatalf("body %q (%v), content length %d", b, err, req.ContentLength)
	}
}

// BenchmarkSendRaw is BenchmarkSend429 for a raw target with bench/race.sh's
// body (60 bytes, shared): the client's cost per request in the race
// against vegeta.
func BenchmarkSendRaw(b *testing.B) {
	srv := httptest.NewServer(refuse43(false))
	defer srv.Close()
	tg, err := New(Config{API: APIRaw, URL: srv.URL + "/v1/chat/completions", Method: http.MethodPost, Body: []byte(`{"messages":[{"role":"user","content":"hello"}],"max_tokens":1}`)})
	if err != nil {
		b.Fatal(err)
	}
	defer tg.Close()
	benchRefused(b, tg, false)
}
