package client

import (
	"net/http"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/httpfield"
	"github.com/ptuprobe/ptuprobe/retryafter"
)

// TestSilentAnswerIsNotRead: an answer whose header retryafter would not
// read, and whose body holds no RetryInfo, takes the advice an empty
// header gives for its status, which is what reading it gives; any other
// answer is read.
func TestSilentAnswerIsNotRead(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 6, 20, 33, 9, 0, time.UTC)
	tg, err := New(Config{API: APIRaw, URL: "http://127.0.0.1:1/v1/chat/completions", Method: http.MethodPost,
		Body: []byte(`{"max_tokens":1}`), Headers: []Header{{"Content-Type", "application/json"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	plain := http.Header{"Content-Type": {"application/json"}, "Date": {"Sun, 06 Dec 2026 20:33:09 GMT"}, "Content-Length": {"57"}}
	for _, c := range []struct {
		status int
		h      http.Header
		body   string
		silent bool
	}{
		{200, plain, `{"usage":{"prompt_tokens":1000,"completion_tokens":50}}`, true},
		{429, plain, `{"error":{"code":"429"}}`, true},
		{503, http.Header{}, "", true},
		{400, plain, `{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}`, false},
		{429, http.Header{"Retry-After-Ms": {"43"}, "Date": plain["Date"]}, "", false},
		{200, http.Header{"X-Ms-Region": {"East US"}}, "", false},
		{200, http.Header{"Apim-Request-Id": {"7"}}, "", false},
		{600, http.Header{}, "", false},
	} {
		silent := tg.scanHeader(c.h)&headerLoud == 0
		if silent != httpfield.Silent(c.h) {
			t.Errorf("%v: scanHeader's silent %v, httpfield.Silent's %v", c.h, silent, !silent)
		}
		s := silentAdvice(c.status, silent, []byte(c.body))
		if (s != nil) != c.silent {
			t.Errorf("status %d, %v: silent %v, want %v", c.status, c.h, s != nil, c.silent)
			continue
		}
		if s != nil {
			if want := retryafter.FromResponse(c.status, c.h, []byte(c.body), now); *s != want {
				t.Errorf("status %d, %v: %+v, read %+v", c.status, c.h, *s, want)
			}
			if again := silentAdvice(c.status, true, nil); again != s {
				t.Errorf("status %d: read twice", c.status)
			}
		}
	}
}
