package cmd

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestOldFlagNamesStillWork: every renamed flag's old name sets the new
// flag (the refusal names the new one, so the value reached it) and says
// once, on stderr, what it is now.
func TestOldFlagNamesStillWork(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args      []string
		old, want string // the note's old name; the refusal
	}{
		{[]string{"burst", "--size", "0"}, "size", "--burst-size must be at least 1"},
		{[]string{"burst", "--waves", "0"}, "waves", "--burst-waves must be at least 1"},
		{[]string{"burst", "--spread", "2s", "--gap", "1s", "--burst-waves", "2"}, "spread", "--burst-spread (2s) is longer than --burst-gap (1s)"},
		{[]string{"burst", "--duration", "0"}, "duration", "--max-duration must be positive"},
		{[]string{"characterize", "--size", "0"}, "size", "--burst-size must be at least 1"},
		{[]string{"calibrate", "--cooldown", "3m"}, "cooldown", "--pause is longer than --max-pause"},
		{[]string{"policies", "--budget", "0s"}, "budget", "--retry-budget must be positive"},
		{[]string{"policies", "--arrivals", "bursty"}, "arrivals", `--arrival: "bursty"`},
		{[]string{"serve", "--ptu", "0"}, "ptu", "--sim-ptu 0"},
		{[]string{"serve", "--dialect", "klingon"}, "dialect", `--sim-dialect "klingon"`},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(context.Background(), tt.args...)
		lines := strings.Split(strings.TrimRight(stderr, "\n"), "\n")
		if code != ExitUsage || len(lines) < 2 || !strings.Contains(lines[len(lines)-1], tt.want) ||
			!strings.Contains(stderr, "note: --"+tt.old+" is now --") {
			t.Errorf("%v: exit %d, stderr %q; want exit 2, a note on --%s, then %q", tt.args, code, stderr, tt.old, tt.want)
		}
	}
}

// TestOldFlagNamesRun: a run given only old names sends its plan.
func TestOldFlagNamesRun(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "burst", "--size", "3", "--waves", "2", "--gap", "20ms", "--wait-wave", "-o", out, "--quiet", "--sim-time-scale", "50")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(readResults(t, out)); n != 6 {
		t.Fatalf("%d rows, want 6 (--size 3 × --waves 2)", n)
	}
	if got := strings.Count(stderr, "note: "); got != 4 {
		t.Errorf("%d notes, want one per old name: %q", got, stderr)
	}
}

// TestUnknownFlagSuggests: an unknown flag is one line, exit 2, with the
// nearest flag the command has (old names lead to their new ones).
func TestUnknownFlagSuggests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		args []string
		want string // "" for no suggestion
	}{
		{[]string{"burst", "--burst-sise", "3"}, "--burst-size"},
		{[]string{"characterize", "--wave", "3"}, "--burst-waves"},
		{[]string{"schedule", "--rat", "2/s"}, "--rate"},
		{[]string{"serve", "--pttu", "3"}, "--sim-ptu"},
		{[]string{"burst", "--ptu", "3"}, "--sim-ptu"},
		{[]string{"calibrate", "--cooldwn", "1s"}, "--pause"},
		{[]string{"analyze", "--out-dri", "x"}, "--out-dir"},
		{[]string{"burst", "--xyzzy"}, ""},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(context.Background(), tt.args...)
		want := "unknown flag: " + tt.args[1]
		if tt.want != "" {
			want += "; did you mean " + tt.want + "?"
		} else if strings.Contains(stderr, "did you mean") {
			t.Errorf("%v: %q suggests something", tt.args, stderr)
		}
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tt.args, code, stderr, want)
		}
	}
}

// TestRenamesDocumented: docs/flags.md gives every old name its new one,
// on one line of its table.
func TestRenamesDocumented(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "docs", "flags.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	root := NewRootCommand()
	n := 0
	for _, c := range root.Commands() {
		for _, old := range oldNames(c) {
			n++
			to := c.Annotations[aliasAnnotation+old]
			found := false
			for _, l := range strings.Split(doc, "\n") {
				if strings.Contains(l, "`--"+old+"`") && strings.Contains(l, "`--"+to+"`") && strings.Contains(l, c.Name()) {
					found = true
				}
			}
			if !found {
				t.Errorf("docs/flags.md has no line naming %s, `--%s` and `--%s`", c.Name(), old, to)
			}
		}
	}
	if n == 0 {
		t.Fatal("no renamed flags found")
	}
}

// TestKeyRequiredBeforeAnyConnection: a named target whose default key
// variable is unset is refused, exit 2, in one line naming the variable
// and --api-key-env, before any connection: a listener sees none. A
// plain --url needs no key.
func TestKeyRequiredBeforeAnyConnection(t *testing.T) {
	// Not parallel: it unsets the key variables of the process.
	for _, v := range []string{"AZURE_OPENAI_API_KEY", "AZURE_OPENAI_AD_TOKEN", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY"} {
		t.Setenv(v, "")
	}
	addr, conns := connCounter(t)
	url := "http://" + addr
	out := filepath.Join(t.TempDir(), "results.csv")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"burst", "--endpoint", url, "--deployment", "d", "-o", out}, "--api-key-env is not given and AZURE_OPENAI_API_KEY (or AZURE_OPENAI_AD_TOKEN) is unset or empty: set it, or give --api-key-env the name of the variable that holds the key"},
		{[]string{"schedule", "--api", "openai", "--url", url + "/v1/chat/completions", "--rate", "1/s", "--duration", "1s", "-o", out}, "OPENAI_API_KEY is unset"},
		{[]string{"characterize", "--api", "anthropic", "--url", url + "/v1/messages", "--model", "m", "--out-dir", t.TempDir()}, "ANTHROPIC_API_KEY is unset"},
		{[]string{"calibrate", "--api", "gemini", "--url", url, "--model", "m", "-o", filepath.Join(t.TempDir(), "c.csv")}, "GEMINI_API_KEY is unset"},
		{[]string{"policies", "--endpoint", url, "--deployment", "d", "--capacity", "2", "--policy", "honor", "--load", "1x", "--repeat", "1", "--clients", "1", "--out-dir", t.TempDir()}, "AZURE_OPENAI_API_KEY (or AZURE_OPENAI_AD_TOKEN) is unset"},
		{[]string{"burst", "--api", "responses", "--url", url + "/v1/responses", "-o", out}, "OPENAI_API_KEY is unset"},
		{[]string{"burst", "--api", "responses", "--endpoint", url, "--deployment", "d", "-o", out}, "AZURE_OPENAI_API_KEY (or AZURE_OPENAI_AD_TOKEN) is unset"},
		// the flag the user typed, not the simulator's of the same field
		{[]string{"burst", "--endpoint", url, "--api-key-env", testKeyEnv, "-o", out}, "--deployment is required for --api azure"},
	}
	for _, tt := range tests {
		code, stdout, stderr := runCLI(context.Background(), tt.args...)
		if code != ExitUsage || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
	if n := conns.Load(); n != 0 {
		t.Fatalf("%d connections made by refused commands", n)
	}

	// A plain --url is any OpenAI-compatible server, perhaps one that
	// needs no key: it is sent to without one, and the run says so.
	var mu sync.Mutex
	var keys []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		keys = append(keys, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	code, _, stderr := runCLI(context.Background(), "burst", "--url", srv.URL+"/v1/chat/completions", "--burst-size", "2", "--burst-waves", "1", "--max-in-flight", "1", "-o", out)
	mu.Lock()
	defer mu.Unlock()
	if code != 0 || !strings.Contains(stderr, "note: OPENAI_API_KEY is unset: sending no key") || len(keys) != 2 || keys[0] != "" {
		t.Fatalf("plain --url without a key: exit %d, keys %q, stderr %q", code, keys, stderr)
	}
}

// TestNoKeyNoteReadsTheKeyAsSent: a plain --url whose OPENAI_API_KEY is
// blank sends no key (the client reads it trimmed), so the run says so.
func TestNoKeyNoteReadsTheKeyAsSent(t *testing.T) {
	t.Parallel()
	f := &targetFlags{url: "http://127.0.0.1:1/v1/chat/completions"}
	for value, noted := range map[string]bool{"": true, " \t\n": true, "sk-x": false} {
		var b strings.Builder
		f.noteNoKey(&b, false, func(string) string { return value })
		if got := strings.Contains(b.String(), "note: OPENAI_API_KEY is unset: sending no key"); got != noted {
			t.Errorf("OPENAI_API_KEY=%q: note %q, want one: %v", value, b.String(), noted)
		}
	}
}
