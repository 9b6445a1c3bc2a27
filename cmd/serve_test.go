package cmd

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ptuprobe/ptuprobe/results"
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
		{"gateway", []string{"--sim-profile", "gateway"}, "/v1/messages",
			`{"max_tokens":5,"messages":[{"role":"user","content":"hello"}]}`, "gateway"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sv := startServe(ctx, t, append([]string{"--sim-ttft", "0", "--sim-tpot", "0"}, tc.args...)...)
			url := sv.url
			if !strings.Contains(strings.Join(sv.banner, "\n"), "ptuprobe burst --") {
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

// TestServeBoundsConnectionsPerClient: serve passes
// --max-conns-per-client to the simulator: with one connection held, a
// second from the same address is answered 503.
func TestServeBoundsConnectionsPerClient(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sv := startServe(ctx, t, "--max-conns-per-client", "1")
	addr := strings.TrimPrefix(sv.url, "http://")
	held, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	io.WriteString(held, "GET /sim/stats HTTP/1.1\r\nHost: sim\r\n\r\n")
	if resp, err := http.ReadResponse(bufio.NewReader(held), nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("the first connection: %v %v", resp, err)
	}
	resp, err := http.Get(sv.url + "/sim/stats")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a second connection from the same address: %d, want 503", resp.StatusCode)
	}
	cancel()
	if code := <-sv.done; code != ExitOK {
		t.Errorf("exit %d; stderr %q", code, sv.stderr.String())
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
		{[]string{"serve", "--sim-profile", "azure"}, ExitUsage, `profile: "azure" is neither a profile`},
		{[]string{"serve", "--sim-ptu", "0", "--sim-time-scale", "-1"}, ExitUsage, "time-scale"},
		{[]string{"serve", "--sim-faults", "teapot"}, ExitUsage, `unknown fault "teapot"`},
		{[]string{"serve", "--addr", "nonsense"}, ExitUsage, "--addr"},
		{[]string{"serve", "--addr", "127.0.0.1:99999"}, ExitUsage, "port from 0 to 65535"},
		{[]string{"serve", "--addr", busy.Addr().String()}, ExitFailure, "listen"},
		{[]string{"serve", "extra"}, ExitUsage, "takes no arguments"},
		{[]string{"serve", "--sim-dialect", "klingon"}, ExitUsage, `--sim-dialect "klingon": want one of azure, openai, anthropic, ietf, gemini`},
		{[]string{"serve", "--sim-dialect", "OpenAI"}, ExitUsage, `--sim-dialect "OpenAI"`},
		{[]string{"serve", "--sim-ietf-legacy"}, ExitUsage, "--sim-ietf-legacy goes only with --sim-dialect ietf"},
		{[]string{"serve", "--sim-dialect", "gemini", "--sim-ietf-retry-after"}, ExitUsage, "--sim-ietf-retry-after goes only with --sim-dialect ietf"},
		{[]string{"serve", "--sim-dialect", "ietf", "--sim-ietf-retry-after", "--sim-omit-retry-headers"}, ExitUsage, "--sim-ietf-retry-after contradicts --sim-omit-retry-headers"},
		{[]string{"serve", "--sim-dialect", "anthropic", "--sim-profile", "gateway", "--sim-gateway-retry-after"}, ExitUsage, "--sim-gateway-retry-after goes only with --sim-dialect azure"},
		{[]string{"serve", "--sim-omit-retry-headers=maybe"}, ExitUsage, "omit-retry-headers"},
		{[]string{"serve", "--max-conns-per-client", "-1"}, ExitUsage, "--max-conns-per-client must not be negative"},
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
	sv := startServe(ctx, t, "--sim-ttft", "0", "--sim-tpot", "0", "--sim-ptu", "1", "--sim-burst-pct", "0")
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
			"1 request came from keys past --sim-max-keys, which have no line of their own\n" +
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

// TestServeSpeaksEveryDialect runs `ptuprobe serve --sim-dialect X` with a
// deployment that one request fills for seconds (--ptu 1, no burst
// allowance): the first call of the dialect's own shape is answered, the
// second refused with the dialect's advice, and /sim/stats names the
// dialect and counts what was advised, per source. The banner names the
// dialect and a first call that works on it.
func TestServeSpeaksEveryDialect(t *testing.T) {
	t.Parallel()
	chat := `{"model":"sim-ptu","max_tokens":1000,"messages":[{"role":"user","content":"hello"}]}`
	tests := []struct {
		args    []string
		path    string
		body    string
		hdr     []string
		try     string            // what the banner's try line names
		refused map[string]string // headers of the 429; "" means absent
		inBody  string            // what the 429's body says
		advised []string          // the sources /sim/stats counts
	}{
		{args: nil, path: "/openai/deployments/sim-ptu/chat/completions?api-version=2024-10-21", body: chat,
			try:     "AZURE_OPENAI_API_KEY=sim ptuprobe burst --endpoint",
			refused: map[string]string{"Retry-After": "*", "Retry-After-Ms": "*"}, inBody: `"code":"429"`,
			advised: []string{"retry-after-ms", "retry-after"}},
		{args: []string{"--sim-dialect", "openai"}, path: "/v1/chat/completions", body: chat,
			try:     "ptuprobe burst --url http://127.0.0.1:",
			refused: map[string]string{"X-Ratelimit-Remaining-Tokens": "0", "X-Ratelimit-Reset-Tokens": "*", "Retry-After": "*", "Retry-After-Ms": ""},
			inBody:  `"code":"rate_limit_exceeded"`, advised: []string{"x-ratelimit-reset-tokens", "retry-after"}},
		{args: []string{"--sim-dialect", "openai", "--sim-omit-retry-headers"}, path: "/v1/chat/completions", body: chat,
			try:     "/v1/chat/completions",
			refused: map[string]string{"X-Ratelimit-Reset-Tokens": "*", "Retry-After": ""},
			inBody:  `"type":"tokens"`, advised: []string{"x-ratelimit-reset-tokens"}},
		{args: []string{"--sim-dialect", "anthropic"}, path: "/v1/messages", body: chat, hdr: []string{"anthropic-version", "2023-06-01"},
			try:     "curl -s http://127.0.0.1:",
			refused: map[string]string{"Anthropic-Ratelimit-Tokens-Remaining": "0", "Anthropic-Ratelimit-Tokens-Reset": "*", "Retry-After": "*"},
			inBody:  `"rate_limit_error"`, advised: []string{"anthropic-ratelimit-tokens-reset", "retry-after"}},
		{args: []string{"--sim-dialect", "ietf", "--sim-ietf-retry-after"}, path: "/v1/chat/completions", body: chat,
			try:     "ptuprobe burst --endpoint",
			refused: map[string]string{"RateLimit": `*"default";r=0;t=*`, "RateLimit-Policy": `*"default";q=*`, "Retry-After": "*"},
			inBody:  "quota-exceeded", advised: []string{"ratelimit", "retry-after"}},
		{args: []string{"--sim-dialect", "ietf", "--sim-ietf-legacy"}, path: "/v1/chat/completions", body: chat,
			refused: map[string]string{"RateLimit-Remaining": "0", "RateLimit-Reset": "*", "RateLimit": "", "Retry-After": ""},
			inBody:  "quota-exceeded", advised: []string{"ratelimit-reset"}},
		{args: []string{"--sim-dialect", "gemini"}, path: "/v1beta/models/sim-ptu:generateContent",
			body:    `{"contents":[{"parts":[{"text":"hello"}]}],"generationConfig":{"maxOutputTokens":1000}}`,
			try:     "/v1beta/models/sim-ptu:generateContent",
			refused: map[string]string{"Retry-After": "", "Retry-After-Ms": ""},
			inBody:  `"retryDelay":"`, advised: []string{"retry-info"}},
	}
	for _, tc := range tests {
		name := strings.Join(tc.args, " ")
		if name == "" {
			name = "azure by default"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sv := startServe(ctx, t, append([]string{"--sim-ttft", "0", "--sim-tpot", "0", "--sim-ptu", "1", "--sim-burst-pct", "0"}, tc.args...)...)
			try := ""
			for _, line := range sv.banner {
				if rest, ok := strings.CutPrefix(line, "try:   "); ok {
					try = rest
				}
			}
			if try == "" || !strings.Contains(try, tc.try) {
				t.Errorf("banner's try line %q does not name %q", try, tc.try)
			}
			dialect := sim.DialectAzure
			if len(tc.args) > 0 {
				dialect = tc.args[1]
			}
			if named := slices.Contains(sv.banner, "dialect: "+dialect); named != (dialect != sim.DialectAzure) {
				t.Errorf("banner %q: names the dialect %v, want %v (only when it is not azure)", sv.banner, named, dialect != sim.DialectAzure)
			}
			send := func() (*http.Response, string) {
				req, _ := http.NewRequest(http.MethodPost, sv.url+tc.path, strings.NewReader(tc.body))
				for i := 0; i+1 < len(tc.hdr); i += 2 {
					req.Header.Set(tc.hdr[i], tc.hdr[i+1])
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp, string(b)
			}
			if resp, b := send(); resp.StatusCode != 200 {
				t.Fatalf("first call: %d %s", resp.StatusCode, b)
			}
			resp, b := send()
			if resp.StatusCode != http.StatusTooManyRequests || !strings.Contains(b, tc.inBody) {
				t.Fatalf("second call: %d %s, want a 429 saying %s", resp.StatusCode, b, tc.inBody)
			}
			for k, want := range tc.refused {
				if got := resp.Header.Get(k); !matches(got, want) {
					t.Errorf("%s = %q, want %q", k, got, want)
				}
			}
			sr, err := http.Get(sv.url + "/sim/stats")
			if err != nil {
				t.Fatal(err)
			}
			var st sim.Stats
			err = json.NewDecoder(sr.Body).Decode(&st)
			sr.Body.Close()
			var sources []string
			for _, a := range st.Advised {
				if a.Count != 1 || a.MinMS != a.MaxMS || a.SumMS != a.MinMS || a.MinMS <= 0 {
					t.Errorf("advised %+v, want one wait", a)
				}
				sources = append(sources, a.Source)
			}
			slices.Sort(sources)
			want := slices.Sorted(slices.Values(tc.advised))
			if err != nil || st.Dialect != dialect || !slices.Equal(sources, want) || st.AdvisedRefusals != 1 {
				t.Errorf("stats: dialect %q, advised %v (%d refusals), %v; want %s, %v", st.Dialect, sources, st.AdvisedRefusals, err, dialect, want)
			}
			cancel()
			if code := <-sv.done; code != ExitOK {
				t.Errorf("exit %d: %s", code, sv.stderr.String())
			}
		})
	}
}

// matches reports whether got fits want: "" is absent, "*" anything
// present, "*x*" anything holding x, else exactly want.
func matches(got, want string) bool {
	switch {
	case want == "":
		return got == ""
	case want == "*":
		return got != ""
	case len(want) > 2 && strings.HasPrefix(want, "*") && strings.HasSuffix(want, "*"):
		return strings.Contains(got, want[1:len(want)-1])
	}
	return got == want
}

// TestSimDialectOnATrafficCommand: --sim-dialect reaches the embedded
// simulator of a traffic command through the one table of simulator
// flags. The embedded client speaks Azure, so the azure and ietf dialects
// (the same routes) run end to end: with --sim-ietf-retry-after a refusal
// advises Retry-After in whole seconds, which the client records; an
// unknown dialect is refused by its flag's name before anything runs.
func TestSimDialectOnATrafficCommand(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	run := func(out string, args ...string) []results.Record {
		t.Helper()
		base := []string{"burst", "--burst-size", "6", "--quiet", "-o", out,
			"--sim-ptu", "1", "--sim-burst-pct", "0", "--sim-ttft", "0", "--sim-tpot", "0"}
		code, _, stderr := runCLI(context.Background(), append(base, args...)...)
		if code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		return readResults(t, out)
	}
	sources := func(recs []results.Record) map[string]int {
		out := map[string]int{}
		for _, r := range recs {
			if r.Status == http.StatusTooManyRequests {
				out[r.WaitSource]++
				if r.WaitSource == results.WaitRetryAfterSeconds && int64(r.WaitMS)%1000 != 0 {
					t.Errorf("retry-after recorded as %v ms, not whole seconds", r.WaitMS)
				}
			}
		}
		return out
	}
	azure := sources(run(filepath.Join(dir, "azure.csv")))
	ietf := sources(run(filepath.Join(dir, "ietf.csv"), "--sim-dialect", "ietf", "--sim-ietf-retry-after"))
	if azure[results.WaitRetryAfterMS] == 0 || len(azure) != 1 {
		t.Errorf("azure: the 429s' sources %v, want retry-after-ms", azure)
	}
	if ietf[results.WaitRetryAfterSeconds] == 0 || ietf[results.WaitRetryAfterMS] != 0 {
		t.Errorf("ietf with retry-after: the 429s' sources %v, want retry-after in seconds and no retry-after-ms", ietf)
	}
	code, _, stderr := runCLI(context.Background(), "burst", "-o", filepath.Join(dir, "never.csv"), "--sim-dialect", "klingon")
	if code != ExitUsage || stderr != `ptuprobe: --sim-dialect "klingon": want one of azure, openai, anthropic, ietf, gemini`+"\n" {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
