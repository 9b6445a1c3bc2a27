package sim

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/tokenize"
)

// o200k is the gpt-4o family's vocabulary, as the commands wire it in.
func o200k(t testing.TB) *tokenize.Tokenizer {
	t.Helper()
	tok, err := tokenize.Get(tokenize.O200kBase)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// spyCounter counts the bytes it was asked to count.
type spyCounter struct {
	TokenCounter
	bytes, calls atomic.Int64
}

func (s *spyCounter) Count(b []byte) int {
	s.bytes.Add(int64(len(b)))
	s.calls.Add(1)
	return s.TokenCounter.Count(b)
}

// syntheticPrompt is a prompt as ptuprobe's client builds one: a lead of
// ten three-letter words of its own, then a filler every request shares.
func syntheticPrompt(seq, words int) string {
	w := strings.Fields("the and for are but not you all any can had her was one our out day get")
	var b strings.Builder
	for i := range 10 {
		b.WriteString(" " + w[(seq>>i+i)%len(w)])
	}
	for i := range words {
		b.WriteString(" " + w[(i*7+3)%len(w)])
	}
	return b.String()
}

// TestTokenMemoCountsAsTheTokenizer: the chunks' counts add up to the
// text's count under the real vocabulary, for synthetic and natural text,
// punctuation, digits, runs of spaces and other scripts.
func TestTokenMemoCountsAsTheTokenizer(t *testing.T) {
	t.Parallel()
	tok := o200k(t)
	m := newTokenMemo(tok)
	prose := strings.Repeat("Operators measure advised waits from provisioned deployments, under steady and bursty load (p99: 16,753 ms); they record every answer   for later analysis.\n\tThe quick brown fox's jump: 3.14159 — naïve café, 東京 and Ünïcödé text. ", 40)
	for _, text := range []string{"", "a", " hello world", syntheticPrompt(7, 4000), prose, strings.Repeat("x", 5000), strings.Repeat("ab ", 3000)} {
		if got, want := m.count([]byte(text)), tok.CountString(text); got != want {
			t.Errorf("%d bytes: memo counts %d, the tokenizer %d", len(text), got, want)
		}
	}
}

// FuzzTokenMemo: whatever the text, the memo counts what the tokenizer
// counts.
func FuzzTokenMemo(f *testing.F) {
	f.Add(syntheticPrompt(1, 300))
	f.Add(strings.Repeat("word, word; WORD's  word\n", 60))
	tok := o200k(f)
	m := newTokenMemo(tok)
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := m.count([]byte(text)), tok.CountString(text); got != want {
			t.Fatalf("%q: memo counts %d, the tokenizer %d", text, got, want)
		}
	})
}

// TestTokenMemoCountsTheFixedPartOnce: requests that share a filler and
// differ in their lead cost the counter the lead's chunk alone once the
// filler has been counted.
func TestTokenMemoCountsTheFixedPartOnce(t *testing.T) {
	t.Parallel()
	spy := &spyCounter{TokenCounter: o200k(t)}
	m := newTokenMemo(spy)
	first := syntheticPrompt(0, 4000)
	m.count([]byte(first))
	if spy.bytes.Load() > int64(len(first)) {
		t.Fatalf("first prompt: %d bytes counted, more than its %d", spy.bytes.Load(), len(first))
	}
	before := spy.bytes.Load()
	for seq := 1; seq <= 100; seq++ {
		m.count([]byte(syntheticPrompt(seq, 4000)))
	}
	if per := (spy.bytes.Load() - before) / 100; per > 5*chunkBytes {
		t.Errorf("%d bytes counted a request after the first, of %d: want at most %d (the lead's chunk)", per, len(first), 5*chunkBytes)
	}
}

// TestPromptTokensUnderATokenizer: with Config.Tokens, usage reports the
// prompt as the vocabulary counts it plus the chat format's overhead (4
// a message and 3 for the reply), on chat and on the Responses API;
// without, the rule of 4 characters.
func TestPromptTokensUnderATokenizer(t *testing.T) {
	t.Parallel()
	tok := o200k(t)
	system, user := "You are a careful assistant. Answer briefly.", "Ünïcödé, digits 123456 and \"quotes\" — count me."
	msgs, _ := json.Marshal([]map[string]string{{"role": "system", "content": system}, {"role": "user", "content": user}})
	chat := `{"messages":` + string(msgs) + `,"max_tokens":5}`
	input, _ := json.Marshal(user)
	resp := `{"model":"m","instructions":"` + system + `","input":` + string(input) + `,"max_output_tokens":5}`
	text := tok.CountString(system) + tok.CountString(user)
	for _, tc := range []struct {
		name, path, body, field string
		tokens                  TokenCounter
		want                    int
	}{
		{"chat", azurePath, chat, "prompt_tokens", tok, text + 2*4 + 3},
		{"responses", "/openai/v1/responses", resp, "input_tokens", tok, text + 2*4 + 3},
		{"chat, 4 characters", azurePath, chat, "prompt_tokens", nil, ceilDiv(len([]rune(system))+len([]rune(user)), 4)},
	} {
		cfg := testConfig()
		cfg.Tokens = tc.tokens
		_, _, ts := newSim(t, cfg)
		r, body := post(t, ts.URL, tc.path, tc.body)
		var got struct {
			Usage map[string]any `json:"usage"`
		}
		if r.StatusCode != http.StatusOK || json.Unmarshal([]byte(body), &got) != nil {
			t.Fatalf("%s: %d %s", tc.name, r.StatusCode, body)
		}
		if n, _ := got.Usage[tc.field].(float64); int(n) != tc.want {
			t.Errorf("%s: %s %v, want %d", tc.name, tc.field, got.Usage[tc.field], tc.want)
		}
	}
}

// TestInProcessCountIsTrusted: a request that carries its count
// (WithPromptTokens) is charged and reported that count, and its body
// is not counted; over the wire no caller can set it.
func TestInProcessCountIsTrusted(t *testing.T) {
	t.Parallel()
	spy := &spyCounter{TokenCounter: o200k(t)}
	cfg := testConfig()
	cfg.Tokens = spy
	clk := NewManualClock(t0)
	cfg.Clock = clk
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body := chatBody(4000, 10)
	req := httptest.NewRequest(http.MethodPost, azurePath, strings.NewReader(body))
	req = req.WithContext(WithPromptTokens(context.Background(), 777))
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `"prompt_tokens":777,`) {
		t.Fatalf("in process: %d %s; want prompt_tokens 777", rec.Code, rec.Body.String())
	}
	if spy.calls.Load() != 0 {
		t.Errorf("the body was counted %d times, though the caller gave its count", spy.calls.Load())
	}
	rec = httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, azurePath, strings.NewReader(body)))
	if want := fmt.Sprintf(`"prompt_tokens":%d,`, spy.TokenCounter.Count([]byte(strings.Repeat("p", 4000)))+7); !strings.Contains(rec.Body.String(), want) {
		t.Fatalf("without a count: %s; want %s", rec.Body.String(), want)
	}
}

// TestInProcessCompletionIsKept: an admitted request that carries its
// completion's length (WithCompletionTokens) is answered that many
// tokens, at most its max_tokens; without one the length is drawn.
func TestInProcessCompletionIsKept(t *testing.T) {
	t.Parallel()
	cfg := testConfig()
	cfg.Clock = NewManualClock(t0)
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	body := chatBody(400, 10)
	for _, c := range []struct{ given, want int }{{7, 7}, {50, 10}, {1, 1}} {
		req := httptest.NewRequest(http.MethodPost, azurePath, strings.NewReader(body))
		req = req.WithContext(WithCompletionTokens(context.Background(), c.given))
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if want := fmt.Sprintf(`"completion_tokens":%d,`, c.want); rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), want) {
			t.Errorf("given %d: %d %s; want %s", c.given, rec.Code, rec.Body.String(), want)
		}
	}
}
