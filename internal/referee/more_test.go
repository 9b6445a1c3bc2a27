package referee

import (
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/testkit"
	"github.com/ptuprobe/ptuprobe/sim"
)

// moreClients are the helper process's further parts (playClient).
var moreClients = map[string]func() int{
	"stale":           staleKey,
	"dropper":         dropper,
	"calls-then-hang": callsThenHang,
	"jitter":          jitteredCalls,
	"stdin":           readStdin,
	"backoff":         func() int { return workers(4, backoffCall) },
	"gateway-stack":   func() int { return workers(4, func(body string) { sdkBehind(body, gatewayBackoff, 1) }) },
	"gateway-at-once": func() int { return workers(4, func(body string) { sdkBehind(body, gatewayAtOnce, 2) }) },
	"urllib3":         func() int { return workers(4, urllib3Call) },
	"langchain":       func() int { return workers(4, langchainCall) },
	"fixed":           func() int { return workers(4, fixedCall) },
	"stale-only":      staleOnly,
	"gemini-url-key":  geminiURLKey,
}

// urllib3Call is urllib3's Retry(total=3, backoff_factor=0.5) scaled by
// a fifth, in headers-only (no Retry-After to honour): 3 retries of a
// 429, 0, 200 and 400 ms after it (urllib3 2.x's get_backoff_time: 0
// after the first error, then factor × 2^(n−1)), undeclared.
func urllib3Call(body string) {
	for _, wait := range []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond} {
		if status, _ := send(body); status != http.StatusTooManyRequests {
			return
		}
		nap(wait)
	}
	send(body)
}

// langchainCall is LangChain JS's ChatOpenAI with its default 6 retries
// (its AsyncCaller's p-retry, the SDK's own retries off: every attempt
// X-Stainless-Retry-Count 0), whose backoff, minTimeout × 2^n × [1, 2],
// ignores the advice; scaled from 1 s to 55 ms.
func langchainCall(body string) {
	wait := 55 * time.Millisecond
	for range 6 {
		if status, _ := send(body, "X-Stainless-Retry-Count", "0"); status != http.StatusTooManyRequests {
			return
		}
		nap(wait + rand.N(wait))
		wait *= 2
	}
	send(body, "X-Stainless-Retry-Count", "0")
}

// fixedCall is a fixed backoff of 6 retries (tenacity's wait_fixed,
// stop_after_attempt(7)), every retry 60 ms after its refusal: one
// owner's count past --owner-retries 5 in 0.4 s, where LangChain's
// doubling backoff takes some 5 s (-long).
func fixedCall(body string) {
	for range 6 {
		if status, _ := send(body); status != http.StatusTooManyRequests {
			return
		}
		nap(60 * time.Millisecond)
	}
	send(body)
}

// nap sleeps d and says on stderr when it woke over 20 ms late: a
// machine too loaded to keep a client's schedule, whose late retry may
// read as a second owner's (a backoff that starts over).
func nap(d time.Duration) {
	began := time.Now()
	time.Sleep(d)
	if late := time.Since(began) - d; late > overslept {
		fmt.Fprintf(os.Stderr, "overslept %v\n", late)
	}
}

const overslept = 20 * time.Millisecond

// staleOnly sends one call with a stale real key only.
func staleOnly() int {
	req, _ := http.NewRequest(http.MethodPost, os.Getenv("PTUPROBE_REFEREE_URL")+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"stale"}]}`))
	req.Header.Set("Authorization", "Bearer sk-stale-real-key")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	return 0
}

// geminiURLKey is a Gemini client that sends its key in the URL (?key=),
// as Google's REST examples do, then one call as @google/genai sends it.
func geminiURLKey() int {
	const body = `{"contents":[{"role":"user","parts":[{"text":"hello"}]}],"generationConfig":{"maxOutputTokens":10}}`
	base := os.Getenv("GOOGLE_GEMINI_BASE_URL") + "/v1beta/models/gemini-2.5-flash:generateContent"
	for _, u := range []string{base + "?key=AIzaSyStaleRealKey0123456789", base} {
		req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if u == base {
			req.Header.Set("X-Goog-Api-Key", os.Getenv("GEMINI_API_KEY"))
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}
	return 0
}

// workers runs call for one call each of n workers, each its own body.
func workers(n int, call func(body string)) int {
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			call(fmt.Sprintf(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"call %d"}]}`, w))
		})
	}
	wg.Wait()
	return 0
}

// staleKey sends one call with the throwaway key, and one with it in
// api-key beside a stale real key in Authorization.
func staleKey() int {
	send(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"fresh"}]}`)
	req, _ := http.NewRequest(http.MethodPost, os.Getenv("PTUPROBE_REFEREE_URL")+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"stale"}]}`))
	req.Header.Set("Api-Key", os.Getenv("OPENAI_API_KEY"))
	req.Header.Set("Authorization", "Bearer sk-stale-real-key")
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
	}
	return 0
}

// dropper is curl in a loop: a new call every 20 ms, none retried, until
// it is ended (or 500 calls).
func dropper() int {
	for i := range 500 {
		send(fmt.Sprintf(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"drop %d"}]}`, i))
		time.Sleep(20 * time.Millisecond)
	}
	return 0
}

// callsThenHang makes four calls, each waited through until admitted,
// says so on stdout, and hangs.
func callsThenHang() int {
	for c := range 4 {
		sdkCall(fmt.Sprintf(`{"model":"gpt-4o","max_tokens":10,"messages":[{"role":"user","content":"call %d"}]}`, c), 20)
	}
	fmt.Println("ready")
	time.Sleep(time.Hour)
	return 0
}

// readStdin exits 0 when stdin holds the test's line, else 4.
func readStdin() int {
	b, _ := io.ReadAll(os.Stdin)
	if string(b) != "hello from the pipe\n" {
		return 4
	}
	return 0
}

// backoffCall is an SDK that ignores the advice: up to 5 attempts,
// 150 ms apart, whatever the 429 says.
func backoffCall(body string) {
	for n := 0; ; n++ {
		if status, _ := send(body, "X-Stainless-Retry-Count", strconv.Itoa(n)); status != http.StatusTooManyRequests || n == 4 {
			return
		}
		time.Sleep(150 * time.Millisecond)
	}
}

// gatewayBackoff is a gateway's attempt of a call: 4 attempts 70 ms
// apart, the client's headers dropped; its last status and advice.
func gatewayBackoff(body string) (int, int) {
	status, ms := send(body)
	for range 3 {
		if status != http.StatusTooManyRequests {
			break
		}
		time.Sleep(70 * time.Millisecond)
		status, ms = send(body)
	}
	return status, ms
}

// gatewayAtOnce is a gateway that repeats a refused call at once, up to
// 3 times.
func gatewayAtOnce(body string) (int, int) {
	status, ms := send(body)
	for range 3 {
		if status != http.StatusTooManyRequests {
			break
		}
		status, ms = send(body)
	}
	return status, ms
}

// sdkBehind is openai-node behind a gateway: retries retries (its
// default is 2), each after the advised wait when it is at most a
// minute, else its own first backoff, 500 ms; the last refusal is the
// call's answer, not waited out.
func sdkBehind(body string, gateway func(string) (int, int), retries int) {
	for n := 0; ; n++ {
		status, ms := gateway(body)
		if status != http.StatusTooManyRequests || n == retries {
			return
		}
		if ms == 0 || ms > 60_000 {
			ms = 500
		}
		time.Sleep(time.Duration(ms) * time.Millisecond)
	}
}

// TestWithheldCredentials: every credential-like variable of the caller
// is withheld from the command but the one PassEnv names, look-alikes
// pass, the SDKs' variables are set; named exactly as docs/referee.md
// lists them.
func TestWithheldCredentials(t *testing.T) {
	t.Parallel()
	set := refereeEnv(sim.DialectOpenAI, "http://127.0.0.1:1", "k", "r")
	env, withheld, _ := commandEnv(userEnv, set, []string{"PASSED_TOKEN"})
	got := strings.Join(env, "\n")
	if len(withheld) != 12 || strings.Count(got, "REAL") != 2 || !strings.Contains(got, "PASSED_TOKEN=") || !strings.Contains(got, "GIT_AUTHOR_NAME=") {
		t.Errorf("withheld %v of\n%s", withheld, got)
	}
	for name, value := range map[string]string{"GITHUB_TOKEN": "x", "NPM_CONFIG__AUTH": "x", "HTTPS_PROXY": "http://u:p@proxy:3128", "PWD": "/", "TOX_TESTENV_PASSENV": "x", "NODE_EXTRA_CA_CERTS": "/ca.pem", "GIT_AUTHOR_EMAIL": "a@b", "HTTP_PROXY": "http://proxy:3128"} {
		want := name == "GITHUB_TOKEN" || name == "NPM_CONFIG__AUTH" || name == "HTTPS_PROXY"
		if credentialLike(name, value) != want {
			t.Errorf("%s=%s: credential-like %v, want %v", name, value, !want, want)
		}
	}
	doc, err := os.ReadFile("../../docs/referee.md")
	if err != nil {
		t.Fatal(err)
	}
	for name := range set {
		if !strings.Contains(string(doc), "`"+name+"`") {
			t.Errorf("docs/referee.md does not name %s", name)
		}
	}
	for _, name := range append(credentialWords, append(credentialParts, credentialNames...)...) {
		if !strings.Contains(string(doc), name) {
			t.Errorf("docs/referee.md does not say that %s is withheld", name)
		}
	}
}

// TestForeignKeysFail: a client that sends a key other than the
// throwaway one, beside it in another header, fails foreign_keys.
func TestForeignKeysFail(t *testing.T) {
	t.Parallel()
	j := helperJob(t, "stale")
	j.OutDir = ""
	v, _, err := Run(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	if c := check(t, v, CheckForeignKeys); c.Value != 1 || c.Pass || v.Pass || v.Admitted != 1 || !strings.HasPrefix(Summary(v), "FAIL (foreign_keys)") {
		t.Errorf("foreign_keys %+v, %s", c, Summary(v))
	}
}

// TestStdinPassesThrough: the command reads the referee's stdin.
func TestStdinPassesThrough(t *testing.T) {
	t.Parallel()
	j := helperJob(t, "stdin")
	j.Stdin, j.OutDir = strings.NewReader("hello from the pipe\n"), ""
	v, _, err := Run(t.Context(), j)
	if err != nil || v.CommandExit != 0 {
		t.Errorf("%v, exit %d: the command did not read the referee's stdin", err, v.CommandExit)
	}
	if stdinOf(os.Stdin) != nil && stdinOf(os.Stdin) != io.Reader(os.Stdin) {
		t.Error("stdinOf(os.Stdin) is neither nothing nor stdin")
	}
}

// TestStormNeighbour: the storm's neighbour advises waits past an SDK's
// backoff, so a client that ignores the header and backs off 150 ms
// passes the storm without it and fails with it, while an SDK that
// honours the header passes; the scenario's neighbour is 5–17 s.
func TestStormNeighbour(t *testing.T) {
	t.Parallel()
	short := &sim.Neighbour{Every: time.Hour, Min: 600 * time.Millisecond, Max: 600 * time.Millisecond}
	for _, tc := range []struct {
		mode      string
		neighbour *sim.Neighbour
		pass      bool
	}{
		{"backoff", &sim.Neighbour{}, true},
		{"backoff", short, false},
		{"sdk", short, true},
	} {
		t.Run(fmt.Sprintf("%s/%v", tc.mode, tc.neighbour.On()), func(t *testing.T) {
			t.Parallel()
			j := helperJob(t, tc.mode)
			j.neighbour, j.OutDir = tc.neighbour, ""
			// The SDK sleeps exactly what it is told: the herd is
			// TestGradesRealClients' business, not the neighbour's.
			j.Expect = []Expectation{{CheckHerd, "<=", 1}}
			v, _, err := Run(t.Context(), j)
			if err != nil {
				t.Fatal(err)
			}
			if v.Pass != tc.pass || check(t, v, CheckEarlyReturns).Pass != tc.pass || v.NeighbourBatches != map[bool]uint64{false: 0, true: 1}[tc.neighbour.On()] {
				t.Errorf("%s; %+v", Summary(v), v)
			}
		})
	}
	var j Job
	for _, s := range []string{ScenarioStorm, ScenarioSpillover, ScenarioHeadersOnly} {
		j.Scenario = s
		if n := j.simConfig().Neighbour(); n.Min != 5*time.Second || n.Max != 17*time.Second || !n.On() {
			t.Errorf("%s: neighbour %+v", s, n)
		}
	}
	if j.Scenario = ScenarioLongWait; j.simConfig().Neighbour().On() {
		t.Error("long-wait has a neighbour")
	}
}

// TestOwnersBehindAGateway: an SDK behind a gateway that drops its
// retry header, all undeclared, is two owners: in long-wait by the
// gateway's bursts (70 ms apart) around the SDK's 500 ms backoff, in the
// storm because the gateway repeats at once what the SDK waits out. (In
// long-wait the SDK retries once, not twice, its default: the burst after
// its backoff is the one that shows a backoff starting over, and a third
// burst 0.7 s later shows nothing more.)
func TestOwnersBehindAGateway(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mode, scenario string
	}{{"gateway-stack", ScenarioLongWait}, {"gateway-at-once", ScenarioStorm}} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			j := helperJob(t, tc.mode)
			j.Scenario, j.OutDir = tc.scenario, ""
			if tc.scenario == ScenarioLongWait {
				j.PTU = 0
			}
			j.neighbour = &sim.Neighbour{Every: time.Hour, Min: 300 * time.Millisecond, Max: 300 * time.Millisecond}
			v, _, err := Run(t.Context(), j)
			if err != nil {
				t.Fatal(err)
			}
			if c := check(t, v, CheckOwners); c.Value != 2 || v.SDKRetries != 0 || v.MarkedRetries != 0 || v.MixedCalls == 0 {
				t.Errorf("owners %+v; max call retries %d, mixed calls %d, sdk %d", c, v.MaxCallRetries, v.MixedCalls, v.SDKRetries)
			}
		})
	}
}

// TestOneOwnerIsOne: a client's own retries are one owner whatever their
// count and schedule: urllib3's 0, 1, 2 s backoff (scaled) in
// headers-only, 6 retries of a fixed backoff in long-wait (every retry
// after a wait, more than the 5 that read as two owners before); the
// same count is two under --owner-retries 5: the run is under
// --owner-retries 5, and its counts are read again without it. With
// -long (.ci/run), LangChain JS's 6 retries too, whose doubling backoff
// sleeps some 5 s. A machine too loaded to keep the client's schedule
// (the client overslept, or this process stalled, over 20 ms) can make
// a late retry read as a backoff that starts over, a second owner: the
// owners are then not judged.
func TestOneOwnerIsOne(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode, scenario string
		ownerRetries   int
		owners         float64
	}{
		{"urllib3", ScenarioHeadersOnly, 0, 1},
		{"fixed", ScenarioLongWait, 5, 2},
	}
	if *long {
		cases = append(cases, struct {
			mode, scenario string
			ownerRetries   int
			owners         float64
		}{"langchain", ScenarioLongWait, 5, 2})
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.mode, tc.ownerRetries), func(t *testing.T) {
			t.Parallel()
			j := helperJob(t, tc.mode)
			j.Scenario, j.OutDir, j.OwnerRetries = tc.scenario, "", tc.ownerRetries
			if tc.scenario == ScenarioHeadersOnly {
				j.Dialect = sim.DialectOpenAI
			} else {
				j.PTU = 0
			}
			var stderr strings.Builder
			j.Stderr = &stderr
			stalls := testkit.WatchStalls(t)
			began := time.Now()
			v, _, err := Run(t.Context(), j)
			if err != nil {
				t.Fatal(err)
			}
			c := check(t, v, CheckOwners)
			if (c.Value != tc.owners || v.MixedCalls != 0) && (strings.Contains(stderr.String(), "overslept") || stalls.Worst(began, time.Now()) > overslept) {
				t.Skipf("owners %+v, mixed calls %d on a machine that could not keep the client's schedule (stalled %v; %s)", c, v.MixedCalls, stalls.Worst(began, time.Now()), strings.TrimSpace(stderr.String()))
			}
			if c.Value != tc.owners || v.MixedCalls != 0 || v.SDKRetries != 0 || v.UndeclaredRetries == 0 {
				t.Errorf("owners %+v; max call retries %d, mixed calls %d, undeclared %d", c, v.MaxCallRetries, v.MixedCalls, v.UndeclaredRetries)
			}
			if tc.ownerRetries == 0 {
				return
			}
			if v.MaxCallRetries != 6 {
				t.Errorf("max call retries %d, want 6: the case tests nothing", v.MaxCallRetries)
			}
			st := sim.Stats{SDKRetries: v.SDKRetries, MarkedRetries: v.MarkedRetries, UndeclaredRetries: v.UndeclaredRetries,
				MixedCalls: v.MixedCalls, MaxCallRetries: v.MaxCallRetries}
			if n := owners(st, 0); n != 1 {
				t.Errorf("without --owner-retries: owners %d, want 1", n)
			}
		})
	}
}

// long runs the volume cases too: LangChain's backoff, some 5 s of
// sleeps (.ci/run's long stage).
var long = flag.Bool("long", false, "also run LangChain's backoff, some 5 s of sleeps (.ci/run's long stage)")

// TestStaleKeyReachedTheSimulator: a client that sends only a stale key
// reads requests 0, and the verdict says that it reached the simulator
// and was refused for its key, not that it never reached it.
func TestStaleKeyReachedTheSimulator(t *testing.T) {
	t.Parallel()
	j := helperJob(t, "stale-only")
	j.OutDir = ""
	v, _, err := Run(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	if s := Summary(v); check(t, v, CheckRequests).Value != 0 || !strings.Contains(s, "1 requests reached the simulator and were refused before the model, 1 of them for their key (401") {
		t.Errorf("%s", s)
	}
}

// TestGeminiKeyInTheURL: in the gemini dialect a key sent in the URL
// (?key=) is a foreign key, and the verdict fails on it.
func TestGeminiKeyInTheURL(t *testing.T) {
	t.Parallel()
	j := helperJob(t, "gemini-url-key")
	j.Dialect, j.OutDir = sim.DialectGemini, t.TempDir()
	v, written, err := Run(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	if c := check(t, v, CheckForeignKeys); c.Value != 1 || c.Pass || v.Pass || v.Admitted != 1 {
		t.Errorf("foreign_keys %+v: %s", c, Summary(v))
	}
	for _, p := range written {
		if b, err := os.ReadFile(p); err != nil || strings.Contains(string(b), "AIzaSyStale") {
			t.Errorf("%s holds the key (%v)", p, err)
		}
	}
}
