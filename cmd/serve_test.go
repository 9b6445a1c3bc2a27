package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/sim"
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
			sv := startServe(ctx, t, append([]string{"--ttft", "0", "--tpot", "0"}, tc.args...)...)
			url := sv.url
			if !strings.Contains(strings.Join(sv.banner, "\n"), "try:   ptuprobe burst --") {
				t.Errorf("banner %q lacks a command to paste", sv.banner)
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
			if code := <-sv.done; code != ExitOK {
				t.Errorf("exit %d, want 0; stderr %q", code, sv.stderr.String())
			}
			if _, err := http.Get(url + "/sim/stats"); err == nil {
				t.Errorf("still answering after cancel")
			}
		})
	}
}

// serving is `ptuprobe serve` running in-process.
type serving struct {
	url    string
	banner []string         // the lines after the URL, up to "Ctrl-C stops it."
	stderr *strings.Builder // read it once done has delivered
	done   chan int         // the exit code, once it has stopped
}

// startServe runs `ptuprobe serve --addr 127.0.0.1:0 args…` until ctx is
// canceled, and reads the URL and the banner it prints.
func startServe(ctx context.Context, t *testing.T, args ...string) *serving {
	t.Helper()
	sv := &serving{stderr: new(strings.Builder), done: make(chan int, 1)}
	pr, pw := io.Pipe()
	go func() {
		code := Run(ctx, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...), pw, sv.stderr)
		pw.Close()
		sv.done <- code
	}()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() { // the pipe closes only once Run has returned
		t.Fatalf("no URL printed; stderr %q", sv.stderr.String())
	}
	sv.url = strings.TrimSpace(sc.Text())
	if !strings.HasPrefix(sv.url, "http://127.0.0.1:") {
		t.Fatalf("first line %q, want the loopback URL", sv.url)
	}
	for sc.Scan() {
		sv.banner = append(sv.banner, sc.Text())
		if strings.Contains(sc.Text(), "Ctrl-C") {
			break
		}
	}
	go io.Copy(io.Discard, pr)
	return sv
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

// TestServePrintsTheWitnessOnStop runs the simulator with a deployment so
// small that one request fills it for about 20 s, so nothing here waits:
// a refused request sent again at once came back early, and the summary
// printed on stop says so per key, naming keys only by their index.
func TestServePrintsTheWitnessOnStop(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sv := startServe(ctx, t, "--ttft", "0", "--tpot", "0", "--ptu", "1", "--burst-pct", "0")
	url := sv.url + "/openai/deployments/sim-ptu/chat/completions?api-version=2024-10-21"

	const key, other = "sekrit-key-4711", "other-sekrit"
	send := func(content string, hdr ...string) int {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"messages":[{"role":"user","content":"`+content+`"}],"max_tokens":1000}`))
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	// Admitted, then at least 900 weighted tokens at 41.7 tokens/s: every
	// later request is refused with a wait of 20 s or more.
	codes := []int{
		send("a", "api-key", key),
		send("b", "api-key", key),
		send("b", "api-key", key), // back at once: early
		send("c", "api-key", key, "X-Stainless-Retry-Count", "1"),
		send("d", "Authorization", "Bearer "+other),
	}
	if want := []int{200, 429, 429, 429, 429}; !slices.Equal(codes, want) {
		t.Fatalf("statuses %v, want %v", codes, want)
	}
	cancel() // what Ctrl-C does to the command's context
	if code := <-sv.done; code != ExitOK {
		t.Fatalf("exit %d, want 0; stderr %q", code, sv.stderr.String())
	}
	want := `simulator stopped
key-0: 4 requests, 3 refused, 1 came back before its advised wait, 0 on time, 1 declared SDK retry
key-1: 1 request, 1 refused, 0 came back before their advised wait, 0 on time, 0 declared SDK retries
all keys: 5 requests, 4 refused, 1 came back before its advised wait, 0 on time, 1 declared SDK retry
`
	got := sv.stderr.String()
	if got != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", got, want)
	}
	if strings.Contains(got, "sekrit") {
		t.Errorf("the summary names a key: %q", got)
	}
}

func TestWitnessSummary(t *testing.T) {
	t.Parallel()
	many := make([]sim.KeyStats, 23)
	for i := range many {
		many[i] = sim.KeyStats{Key: "key-" + strconv.Itoa(i), Admitted: 1}
	}
	tests := []struct {
		name string
		st   sim.Stats
		want string
	}{
		{"no request", sim.Stats{}, "no request reached the model\n"},
		{"one key", sim.Stats{Admitted: 106, Refused: 14, EarlyReturns: 3, RetriesOnTime: 11, Keys: []sim.KeyStats{
			{Key: "key-0", Admitted: 106, Refused: 14, EarlyReturns: 3, RetriesOnTime: 11},
		}}, "key-0: 120 requests, 14 refused, 3 came back before their advised wait, 11 on time, 0 declared SDK retries\n"},
		{"more keys than lines", sim.Stats{Admitted: 23, Keys: many},
			"key-19: 1 request, 0 refused, 0 came back before their advised wait, 0 on time, 0 declared SDK retries\n" +
				"… and 3 more keys\n" +
				"all keys: 23 requests, 0 refused, 0 came back before their advised wait, 0 on time, 0 declared SDK retries\n"},
		{"untracked keys and forgotten refusals", sim.Stats{Admitted: 2, Refused: 1, UntrackedKeys: 1, AdvisedWaitsEvicted: 7, Keys: []sim.KeyStats{
			{Key: "key-0", Admitted: 2, SDKRetries: 2},
		}}, "key-0: 2 requests, 0 refused, 0 came back before their advised wait, 0 on time, 2 declared SDK retries\n" +
			"all keys: 3 requests, 1 refused, 0 came back before their advised wait, 0 on time, 0 declared SDK retries\n" +
			"1 request came from keys past --max-keys, which have no line of their own\n" +
			"7 refusals were forgotten before their retry came back (the simulator remembers the last 65,536), so the counts above are a floor\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var b strings.Builder
			printWitness(&b, tc.st)
			if got := b.String(); !strings.HasSuffix(got, tc.want) {
				t.Errorf("summary:\n%s\nwant it to end with:\n%s", got, tc.want)
			}
		})
	}
}
