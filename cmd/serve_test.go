package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
)

func TestServeAnswersAndStopsOnCancel(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		args    []string
		path    string
		body    string
		profile string
	}{
		{"ptu", nil, "/openai/deployments/sim-ptu/chat/completions?api-version=2024-10-21",
			`{"messages":[{"role":"user","content":"hello"}],"max_tokens":5}`, "ptu"},
		{"gateway", []string{"--profile", "gateway"}, "/v1/messages",
			`{"max_tokens":5,"messages":[{"role":"user","content":"hello"}]}`, "gateway"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			pr, pw := io.Pipe()
			var stderr strings.Builder
			done := make(chan int, 1)
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--ttft", "0", "--tpot", "0"}, tc.args...)
			go func() {
				code := Run(ctx, args, pw, &stderr)
				pw.Close()
				done <- code
			}()
			sc := bufio.NewScanner(pr)
			if !sc.Scan() {
				t.Fatalf("no URL printed; stderr %q", stderr.String())
			}
			url := strings.TrimSpace(sc.Text())
			if !strings.HasPrefix(url, "http://127.0.0.1:") {
				t.Fatalf("first line %q, want the loopback URL", url)
			}
			var banner []string
			for sc.Scan() {
				banner = append(banner, sc.Text())
				if strings.Contains(sc.Text(), "Ctrl-C") {
					break
				}
			}
			go io.Copy(io.Discard, pr)
			if !strings.Contains(strings.Join(banner, "\n"), "try:   ptuprobe burst --") {
				t.Errorf("banner %q lacks a command to paste", banner)
			}
			resp, err := http.Post(url+tc.path, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			sr, err := http.Get(url + "/sim/stats")
			if err != nil {
				t.Fatal(err)
			}
			var st struct {
				Profile  string
				Admitted int
			}
			err = json.NewDecoder(sr.Body).Decode(&st)
			sr.Body.Close()
			if err != nil || st.Profile != tc.profile || st.Admitted != 1 {
				t.Errorf("stats %+v, %v", st, err)
			}
			cancel() // what Ctrl-C does to the command's context
			if code := <-done; code != ExitOK {
				t.Errorf("exit %d, want 0; stderr %q", code, stderr.String())
			}
			if _, err := http.Get(url + "/sim/stats"); err == nil {
				t.Errorf("still answering after cancel")
			}
		})
	}
}

func TestServeUsageErrors(t *testing.T) {
	t.Parallel()
	// An address already in use is a failure to listen, not bad input.
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"serve", "--profile", "azure"}, ExitUsage, `profile "azure"`},
		{[]string{"serve", "--ptu", "0", "--time-scale", "-1"}, ExitUsage, "time-scale"},
		{[]string{"serve", "--faults", "teapot"}, ExitUsage, `unknown fault "teapot"`},
		{[]string{"serve", "--addr", "nonsense"}, ExitUsage, "--addr"},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, ExitUsage, "port from 0 to 65535"},
		{[]string{"serve", "--addr", busy.Addr().String()}, ExitFailure, "listen"},
		{[]string{"serve", "extra"}, ExitUsage, "takes no arguments"},
	}
	for _, tc := range tests {
		code, _, stderr := runCLI(context.Background(), tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.msg) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d stderr %q; want exit %d and one line about %q", tc.args, code, stderr, tc.code, tc.msg)
		}
	}
}
