package client

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/hostile"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestHostileTargets sends to each misbehaving server of internal/hostile
// over loopback: every fault becomes one row with its class, in bounded
// time, and nothing the target says is written unclean.
func TestHostileTargets(t *testing.T) {
	t.Parallel()
	type row struct {
		status       int
		err          string
		source       string
		retryAfterMS string
		retryAfter   string
	}
	tests := []struct {
		name string
		cfg  hostile.Config
		want row
	}{
		{"9.5 MB header", hostile.Config{Mode: hostile.HugeHeader}, row{0, results.ErrHeaders, results.WaitNone, "", ""}},
		{"header at the limit", hostile.Config{Mode: hostile.HugeHeader, HeaderBytes: MaxHeaderBytes}, row{0, results.ErrHeaders, results.WaitNone, "", ""}},
		{"32 KiB header is read", hostile.Config{Mode: hostile.HugeHeader, HeaderBytes: 32 << 10}, row{429, "", results.WaitRetryAfterMS, "10", ""}},
		{"invalid UTF-8", hostile.Config{Mode: hostile.NonUTF8},
			row{429, "", results.WaitInvalid, "25\ufffd\ufffd", "\ufffd\ufffd7" + strings.Repeat("é", 28)}},
		{"repeated retry headers that differ", hostile.Config{Mode: hostile.DupRetryAfter},
			row{429, "", results.WaitInvalid, "10, 20000", "1, 30"}},
		{"garbage", hostile.Config{Mode: hostile.Garbage}, row{0, results.ErrOther, results.WaitNone, "", ""}},
		{"reset mid-headers", hostile.Config{Mode: hostile.Reset}, row{0, results.ErrReset, results.WaitNone, "", ""}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv, err := hostile.Start(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			tg, err := New(Config{API: APIOpenAI, URL: srv.URL() + "/v1/chat/completions", Key: "sk-hostile-0123456789",
				PromptTokens: 10, MaxTokens: 1, Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer tg.Close()
			r := send(tg)
			var file bytes.Buffer
			w, err := results.NewWriter(&file)
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Write(&r); err != nil {
				t.Fatal(err)
			}
			if !utf8.Valid(file.Bytes()) || bytes.Count(file.Bytes(), []byte("\n")) != 2 {
				t.Fatalf("the row is not one line of valid UTF-8: %q", file.Bytes())
			}
			got := row{r.Status, r.Error, r.WaitSource, r.RetryAfterMS, r.RetryAfter}
			if got != tt.want {
				t.Fatalf("row %+v, want %+v", got, tt.want)
			}
		})
	}
}
