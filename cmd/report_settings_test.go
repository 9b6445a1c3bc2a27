package cmd

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ptuprobe/ptuprobe/internal/pagecheck"
	"github.com/ptuprobe/ptuprobe/report"
)

// Canaries for the flags whose values report.html must withhold.
const (
	settingsCanaryKey    = "sk-canary-settings-41d7"
	settingsCanaryEnv    = "PTUPROBE_CANARY_KEY_ENV"
	settingsCanaryHeader = "canary-header-value-93b2"
	settingsCanaryGroup  = "canary-raw-group"
	settingsCanaryRID    = "canary-request-id-77e1"
)

// canaryTarget answers two requests in three with a 429 advising 40 ms,
// every answer naming a canary deployment and request id.
func canaryTarget(t *testing.T) *httptest.Server {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("apim-request-id", settingsCanaryRID)
		w.Header().Set("x-request-id", settingsCanaryRID)
		w.Header().Set("x-ms-deployment-name", canaryDeployment)
		if n.Add(1)%3 != 0 {
			w.Header().Set("retry-after-ms", "40")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error":{"code":"429","message":"`+canaryDeployment+` is busy"}}`)
			return
		}
		io.WriteString(w, `{"usage":{"prompt_tokens":1000,"completion_tokens":40}}`)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// init sets the canary key's variable for the whole test binary, where
// t.Setenv would keep TestReportHTMLWithholdsWhatNamesTheTarget from
// running in parallel: no other test reads that variable.
func init() { os.Setenv(settingsCanaryEnv, settingsCanaryKey) }

// TestReportHTMLWithholdsWhatNamesTheTarget runs characterize and policies
// against a real target with a canary in every flag that can name it or
// carry free text (endpoint, deployment, key variable, header, a raw group
// name, a label, a threshold, the output path) and in what the target
// answers (request ids, the deployment, the error body): no published file
// — report.html above all, whose settings section lists the flags given —
// holds any of them; report.html names the withheld flags and shows the
// values of the others.
func TestReportHTMLWithholdsWhatNamesTheTarget(t *testing.T) {
	t.Parallel() // settingsCanaryEnv is set for the whole binary (init)
	srv := canaryTarget(t)
	host := strings.TrimPrefix(srv.URL, "http://")
	target := []string{"--endpoint", srv.URL, "--deployment", canaryDeployment, "--api-key-env", settingsCanaryEnv,
		"--header", "X-Canary: " + settingsCanaryHeader, "--quiet"}
	withheld := []string{"--api-key-env", "--deployment", "--endpoint", "--header", "--out-dir"}
	canaries := []string{settingsCanaryKey, settingsCanaryEnv, settingsCanaryHeader, settingsCanaryGroup, settingsCanaryRID, canaryDeployment, host, "canary"}

	cases := []struct {
		name     string
		args     []string
		withheld []string
		shown    map[string]string
	}{
		{"characterize", []string{"characterize", "--group", settingsCanaryGroup, "--label", settingsCanaryGroup + "=Published",
			"--fail-if", settingsCanaryGroup + ".count<0", "--burst-size", "6", "--burst-waves", "2", "--burst-gap", "50ms", "--skip-schedule"},
			[]string{"--fail-if", "--group", "--label"}, map[string]string{"--burst-size": "6", "--burst-gap": "50ms", "--skip-schedule": "true"}},
		{"policies", []string{"policies", "--policy", "none", "--policy", "honor", "--pause", "0s", "--load", "3/s", "--duration", "1s",
			"--warmup", "0s", "--tail", "0s", "--repeat", "1", "--clients", "2"},
			nil, map[string]string{"--load": "3/s", "--policy": "none", "--pause": "0s"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			out := filepath.Join(t.TempDir(), "canary-out")
			args := append(append(append([]string{}, c.args...), target...), "--out-dir", out)
			code, stdout, stderr := runCLI(context.Background(), args...)
			if code != ExitOK {
				t.Fatalf("exit %d: %s\n%s", code, stderr, stdout)
			}
			entries, err := os.ReadDir(out)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				if e.Name() == "results.csv" { // the record of the run, not published
					continue
				}
				b, err := os.ReadFile(filepath.Join(out, e.Name()))
				if err != nil {
					t.Fatal(err)
				}
				for _, canary := range canaries {
					if bytes.Contains(bytes.ToLower(b), []byte(strings.ToLower(canary))) {
						t.Errorf("%s contains %q", e.Name(), canary)
					}
				}
			}
			b, err := os.ReadFile(filepath.Join(out, report.HTMLFile))
			if err != nil {
				t.Fatal(err)
			}
			page, err := pagecheck.Parse(b)
			if err != nil {
				t.Fatal(err)
			}
			if err := pagecheck.SelfContained(page); err != nil {
				t.Error(err)
			}
			settings := page.ByID("settings")
			if settings == nil {
				t.Fatal("no settings section")
			}
			shown := map[string]string{}
			for _, row := range pagecheck.Rows(page.ByID("settings-table")) {
				if _, seen := shown[row[0].Text]; !seen {
					shown[row[0].Text] = row[1].Text
				}
			}
			for flag, want := range c.shown {
				if shown[flag] != want {
					t.Errorf("settings show %s = %q, want %q", flag, shown[flag], want)
				}
			}
			text := settings.Content()
			for _, flag := range append(withheld, c.withheld...) {
				if _, ok := shown[flag]; ok {
					t.Errorf("settings show the value of %s", flag)
				}
				if !strings.Contains(text, flag) {
					t.Errorf("settings do not name the withheld %s: %s", flag, text)
				}
			}
		})
	}
}
