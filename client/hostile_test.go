package client

import (
	"bytes"
	"strings"
	"testing"
	"testing/synctest"
	"time"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/hostile"
	"github.com/ptuprobe/ptuprobe/internal/memnet"
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
		{"9.5 MB header", hostile.Config{Mode: hostile.HugeHeader}, row{0, results.ClassHeaders, results.WaitNone, "", ""}},
		{"header at the limit", hostile.Config{Mode: hostile.HugeHeader, HeaderBytes: MaxHeaderBytes}, row{0, results.ClassHeaders, results.WaitNone, "", ""}},
		{"32 KiB header is read", hostile.Config{Mode: hostile.HugeHeader, HeaderBytes: 32 << 10}, row{429, "", results.WaitRetryAfterMS, "10", ""}},
		{"invalid UTF-8", hostile.Config{Mode: hostile.NonUTF8},
			row{429, "", results.WaitInvalid, "25\ufffd\ufffd", "\ufffd\ufffd7" + strings.Repeat("é", 28)}},
		{"repeated retry headers that differ", hostile.Config{Mode: hostile.DupRetryAfter},
			row{429, "", results.WaitInvalid, "10, 20000", "1, 30"}},
		{"endless body", hostile.Config{Mode: hostile.EndlessBody}, row{429, results.ClassBody, results.WaitNone, "", ""}},
		{"endless body, status 200", hostile.Config{Mode: hostile.EndlessBody, Status: 200}, row{200, results.ClassBody, results.WaitNone, "", ""}},
		{"garbage", hostile.Config{Mode: hostile.Garbage}, row{0, results.ClassOther, results.WaitNone, "", ""}},
		{"reset mid-headers", hostile.Config{Mode: hostile.Reset}, row{0, results.ClassReset, results.WaitNone, "", ""}},
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

// TestSlowBodyTimesOut: a body that trickles ends at the request's
// Timeout, recorded as error "timeout" with the status and the time to the
// headers it had. Served over memnet in a synctest bubble, the timeout
// passes on the fake clock, exactly.
func TestSlowBodyTimesOut(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		cfg     hostile.Config
		timeout time.Duration
		status  int
		err     string
	}{
		{"a byte every 100 ms", hostile.Config{Mode: hostile.SlowBody, Trickle: 100 * time.Millisecond}, 2 * time.Second, 429, results.ClassTimeout},
		{"a byte every 10 s", hostile.Config{Mode: hostile.SlowBody, Trickle: 10 * time.Second, Status: 200}, 3 * time.Second, 200, results.ClassTimeout},
		{"done within the timeout", hostile.Config{Mode: hostile.SlowBody, Trickle: 10 * time.Millisecond, BodyBytes: 50}, time.Second, 429, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			synctest.Test(t, func(t *testing.T) {
				ln := memnet.Listen()
				srv, err := hostile.Serve(ln, tt.cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				tg, err := New(Config{API: APIOpenAI, URL: "http://hostile.invalid/v1/chat/completions", PromptTokens: 10, MaxTokens: 1,
					Timeout: tt.timeout, DialContext: ln.DialContext})
				if err != nil {
					t.Fatal(err)
				}
				defer tg.Close()
				r := send(tg)
				if r.Status != tt.status || r.Error != tt.err || r.TTFBMS != 0 {
					t.Fatalf("row %+v, want status %d, error %q", r, tt.status, tt.err)
				}
				if tt.err == results.ClassTimeout && r.LatencyMS != float64(tt.timeout/time.Millisecond) {
					t.Fatalf("latency %v ms, want the timeout, %v", r.LatencyMS, tt.timeout)
				}
			})
		})
	}
}
