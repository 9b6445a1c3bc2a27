package cmd

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// running is a traffic command running in-process with --metrics-addr,
// its output read as it comes.
type running struct {
	metricsURL string
	stdout     *bufio.Scanner
	stderr     *strings.Builder // read it once done has delivered
	lingering  chan struct{}    // closed once stderr says the command waits for a last scrape
	done       chan int         // the exit code, once Run has returned and stderr is read
}

// startWithMetrics runs the command line args (which carry
// --metrics-addr) and reads the metrics URL it prints on stderr.
func startWithMetrics(t *testing.T, args ...string) *running {
	t.Helper()
	r := &running{stderr: new(strings.Builder), lingering: make(chan struct{}), done: make(chan int, 1)}
	outR, outW := io.Pipe()
	errR, errW := io.Pipe()
	code := make(chan int, 1)
	go func() {
		c := Run(context.Background(), args, outW, errW)
		outW.Close()
		errW.Close()
		code <- c
	}()
	r.stdout = bufio.NewScanner(outR)
	sc := bufio.NewScanner(errR)
	for sc.Scan() {
		r.stderr.WriteString(sc.Text() + "\n")
		if u, ok := strings.CutPrefix(sc.Text(), "metrics: "); ok {
			r.metricsURL = u
			break
		}
	}
	if r.metricsURL == "" {
		t.Fatalf("no metrics URL printed; stderr %q", r.stderr.String())
	}
	go func() {
		for sc.Scan() {
			r.stderr.WriteString(sc.Text() + "\n")
			if strings.HasPrefix(sc.Text(), "metrics: waiting up to ") {
				close(r.lingering)
			}
		}
		r.done <- <-code
	}()
	return r
}

// finalScrape scrapes once while the run goes on, waits for the summary
// (printed after the run has finished), and scrapes again: the endpoint
// waits for that scrape. It returns the scrape that saw the run finished,
// and whether the first came before the end (then the command lingered).
//
// When the first scrape came before the end, the last waits for the
// command to say it waits for one: the command decides whether to linger
// after printing its summary, so a last scrape sent as soon as the summary
// is read could land before that decision, and the command would rightly
// not wait for a scrape it already had.
func (r *running) finalScrape(t *testing.T) (text string, lingered bool) {
	return r.finalScrapeAfter(t, "results: ")
}

// finalScrapeAfter is finalScrape for a command whose first line on
// stdout after the run starts with end.
func (r *running) finalScrapeAfter(t *testing.T, end string) (text string, lingered bool) {
	t.Helper()
	first, _ := get(r.metricsURL)
	lingered = strings.Contains(first, "ptuprobe_run_finished 0")
	for r.stdout.Scan() {
		if strings.HasPrefix(r.stdout.Text(), end) {
			break
		}
	}
	go func() {
		for r.stdout.Scan() {
		}
	}()
	if lingered {
		select {
		case <-r.lingering:
		case code := <-r.done:
			t.Fatalf("scraped during the run, but the command ended (exit %d) without waiting for a last scrape: %q", code, r.stderr.String())
		}
	}
	last, err := get(r.metricsURL)
	if err != nil || !strings.Contains(last, "ptuprobe_run_finished 1") {
		// The first scrape came after the end and was the last one.
		last = first
	}
	if code := <-r.done; code != 0 {
		t.Fatalf("exit %d: %s", code, r.stderr.String())
	}
	if !strings.Contains(last, "ptuprobe_run_finished 1") {
		t.Fatalf("no scrape saw the run finished:\n%.500s", last)
	}
	return last, lingered
}

func get(url string) (string, error) {
	resp, err := http.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), err
}

// series maps each sample of a family in the text format to its value,
// keyed by its labels in order ("error=,group=g,status=200").
func series(t *testing.T, text, family string) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.LegacyValidation)
	mfs, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	mf, ok := mfs[family]
	if !ok {
		return out
	}
	for _, m := range mf.GetMetric() {
		var key []string
		for _, l := range m.GetLabel() {
			key = append(key, l.GetName()+"="+l.GetValue())
		}
		out[strings.Join(key, ",")] = value(m)
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.GetCounter() != nil:
		return m.GetCounter().GetValue()
	case m.GetGauge() != nil:
		return m.GetGauge().GetValue()
	case m.GetHistogram() != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	return -1
}

// TestMetricsEqualTheRows: after a run through the real CLI (a retry
// owner, 429s with and without advice, a 503, resets), the last scrape's
// counters equal the rows of the results file; no key, host, deployment or
// echoed secret appears in the metrics.
func TestMetricsEqualTheRows(t *testing.T) {
	t.Parallel()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("x-echo", r.Header.Get("api-key")) // a hostile target echoing the key
		switch n.Add(1) % 6 {
		case 0:
			w.Header().Set("retry-after-ms", "5")
			w.Header().Set("retry-after", canaryKey)
			w.WriteHeader(429)
		case 1:
			w.Header().Set("retry-after-ms", "3")
			w.WriteHeader(429)
		case 2:
			w.WriteHeader(503)
		case 3:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		default:
			io.WriteString(w, `{"usage":{"prompt_tokens":10,"completion_tokens":4}}`)
		}
	}))
	defer srv.Close()
	out := filepath.Join(t.TempDir(), "results.csv")
	r := startWithMetrics(t, "burst", "--endpoint", srv.URL, "--deployment", canaryDeployment, "--api-key-env", canaryKeyEnv,
		"--burst-size", "20", "--burst-waves", "2", "--burst-gap", "300ms", "--max-attempts", "3", "--retry-jitter", "0",
		"--group", "metrics-check", "-o", out, "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "1m")
	text, lingered := r.finalScrape(t)
	recs := readResults(t, out)

	want := map[string]float64{}
	var n429, retries, waits, first float64
	for _, rec := range recs {
		if rec.Group != "metrics-check" {
			t.Fatalf("row %+v", rec)
		}
		want["error="+rec.Error+",group=metrics-check,status="+strconv.Itoa(rec.Status)]++
		if rec.Is429() {
			n429++
		}
		if rec.Attempt > 1 {
			retries++
		} else {
			first++
		}
		if rec.HasWait() {
			waits++
		}
	}
	if retries == 0 || n429 == 0 || len(want) < 4 {
		t.Fatalf("a run without retries, 429s or variety: %v", want)
	}
	got := series(t, text, "ptuprobe_attempts_total")
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("attempts by status:\n got %v\nwant %v (rows)", got, want)
	}
	for family, v := range map[string]float64{
		"ptuprobe_http_429_total":         n429,
		"ptuprobe_retries_total":          retries,
		"ptuprobe_requests_sent_total":    first,
		"ptuprobe_requests_planned_total": 40,
		"ptuprobe_advised_wait_seconds":   waits,
		"ptuprobe_send_lateness_seconds":  float64(len(recs)),
	} {
		if g := series(t, text, family)["group=metrics-check"]; g != v {
			t.Errorf("%s = %v, want %v", family, g, v)
		}
	}
	if g := series(t, text, "ptuprobe_requests_in_flight")[""]; g != 0 {
		t.Errorf("in flight at the end: %v", g)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, secret := range []string{canaryKey, canaryDeployment, host, "canary"} {
		if strings.Contains(text, secret) {
			t.Errorf("the metrics contain %q", secret)
		}
	}
	// A machine slow enough to scrape first after the end sees no wait.
	if lingered && !strings.Contains(r.stderr.String(), "waiting up to 1m0s for a last scrape") {
		t.Errorf("scraped during the run, but stderr does not say it waits for a last scrape: %q", r.stderr.String())
	}
}

// TestCalibrateMetricsEqualTheRows: calibrate --metrics-addr counts every
// probe as a plan of its group: the last scrape's counters equal the rows
// of --results, and the planned requests are every probe's plan.
func TestCalibrateMetricsEqualTheRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "results.csv")
	r := startWithMetrics(t, append(kneeArgs(kneeTarget(t, 8)),
		"-o", filepath.Join(dir, "calibrate.csv"), "--results", out, "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "1m")...)
	text, _ := r.finalScrapeAfter(t, "step ") // the evidence table, printed once the probes are done
	recs := readResults(t, out)
	want := map[string]float64{}
	var n429 float64
	for _, rec := range recs {
		want["error="+rec.Error+",group=calibrate,status="+strconv.Itoa(rec.Status)]++
		if rec.Is429() {
			n429++
		}
	}
	if n429 == 0 || len(recs) < 20 {
		t.Fatalf("%d rows, %v 429s: the probes did not reach the knee", len(recs), n429)
	}
	if got := series(t, text, "ptuprobe_attempts_total"); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("attempts by status:\n got %v\nwant %v (rows)", got, want)
	}
	for family, v := range map[string]float64{
		"ptuprobe_http_429_total":        n429,
		"ptuprobe_requests_sent_total":   float64(len(recs)),
		"ptuprobe_send_lateness_seconds": float64(len(recs)),
		// Each probe sends its whole plan, once: no retries in calibrate.
		"ptuprobe_requests_planned_total": float64(len(recs)),
	} {
		if g := series(t, text, family)["group=calibrate"]; g != v {
			t.Errorf("%s = %v, want %v", family, g, v)
		}
	}
}

// TestEmbeddedSimulatorMetrics: a traffic command on the embedded
// simulator serves the simulator's own counts beside the client's, and
// they agree with the rows.
func TestEmbeddedSimulatorMetrics(t *testing.T) {
	t.Parallel()
	out := filepath.Join(t.TempDir(), "results.csv")
	// On the model's own clock (no --sim-time-scale) and answered at once:
	// a wave of 30 overruns the bucket however late a loaded machine
	// sends it (at 20× time a wave spread over 300 ms was 6 s of refill).
	r := startWithMetrics(t, "burst", "--burst-size", "30", "--burst-waves", "2", "--burst-gap", "100ms", "--sim-ttft", "0", "--sim-tpot", "0",
		"-o", out, "--metrics-addr", "127.0.0.1:0", "--metrics-linger", "1m")
	text, _ := r.finalScrape(t)
	var ok, refused float64
	for _, rec := range readResults(t, out) {
		switch rec.Status {
		case 200:
			ok++
		case 429:
			refused++
		}
	}
	if ok == 0 || refused == 0 {
		t.Fatalf("%v 200s and %v 429s: the check would prove little", ok, refused)
	}
	if g := series(t, text, "ptuprobe_sim_admitted_total")[""]; g != ok {
		t.Errorf("the simulator admitted %v, the client recorded %v 200s", g, ok)
	}
	if g := series(t, text, "ptuprobe_sim_refused_total")[""]; g != refused {
		t.Errorf("the simulator refused %v, the client recorded %v 429s", g, refused)
	}
	if g := series(t, text, "ptuprobe_http_429_total")["group=burst-shaped"]; g != refused {
		t.Errorf("ptuprobe_http_429_total %v, want %v", g, refused)
	}
}

// TestServeMetricsEqualWhatTheClientRecorded: serve --metrics-addr,
// scraped while a client runs against it: admitted + refused equal the
// client's 200s and 429s.
func TestServeMetricsEqualWhatTheClientRecorded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sv := startServe(ctx, t, "--sim-ttft", "0", "--sim-tpot", "0", "--sim-ptu", "2", "--sim-burst-pct", "0",
		"--metrics-addr", "127.0.0.1:0", "--metrics-linger", "0")
	var metricsURL string
	for _, l := range sv.banner {
		if u, ok := strings.CutPrefix(l, "metrics: "); ok {
			metricsURL = u
		}
	}
	if metricsURL == "" {
		t.Fatalf("banner %q names no metrics URL", sv.banner)
	}
	out := filepath.Join(t.TempDir(), "results.csv")
	code, _, stderr := runCLI(context.Background(), "burst", "--endpoint", sv.url, "--deployment", "sim-ptu", "--api-key-env", testKeyEnv,
		"--burst-size", "15", "--burst-waves", "2", "--burst-gap", "50ms", "-o", out, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	text, err := get(metricsURL)
	if err != nil {
		t.Fatal(err)
	}
	var ok, refused float64
	for _, rec := range readResults(t, out) {
		switch rec.Status {
		case 200:
			ok++
		case 429:
			refused++
		}
	}
	if refused == 0 {
		t.Fatal("no 429: the check would prove little")
	}
	if g := series(t, text, "ptuprobe_sim_admitted_total")[""]; g != ok {
		t.Errorf("admitted %v, the client recorded %v 200s", g, ok)
	}
	if g := series(t, text, "ptuprobe_sim_refused_total")[""]; g != refused {
		t.Errorf("refused %v, the client recorded %v 429s", g, refused)
	}
	if g := series(t, text, "ptuprobe_sim_utilization_ratio")[""]; g <= 0 {
		t.Errorf("utilization %v", g)
	}
	cancel()
	if code := <-sv.done; code != 0 {
		t.Errorf("serve exit %d: %s", code, sv.stderr.String())
	}
	if _, err := get(metricsURL); err == nil {
		t.Error("metrics still served after serve stopped")
	}
}

// TestMetricsAddrRefused: a malformed --metrics-addr or --metrics-linger
// is one line and exit 2, a busy port exit 1; nothing is sent.
func TestMetricsAddrRefused(t *testing.T) {
	t.Parallel()
	var hits atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1) }))
	defer srv.Close()
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--metrics-addr", "127.0.0.1"}, 2, "--metrics-addr \"127.0.0.1\": want [HOST]:PORT"},
		{[]string{"--metrics-addr", "127.0.0.1:99999"}, 2, "--metrics-addr"},
		{[]string{"--metrics-addr", "metrics.example.net:9464"}, 2, "must be an IP address"},
		{[]string{"--metrics-addr", ":0", "--metrics-linger", "-1s"}, 2, "--metrics-linger must be between 0 and 1h0m0s"},
		{[]string{"--metrics-addr", busy.Addr().String()}, 1, "--metrics-addr: listen tcp"},
	}
	for _, tc := range tests {
		for _, command := range [][]string{
			{"schedule", "--url", srv.URL, "--rate", "10/s", "--duration", "200ms"},
			{"burst", "--url", srv.URL, "--burst-size", "2", "--burst-waves", "1"},
		} {
			args := append(append(command, "-o", filepath.Join(t.TempDir(), "r.csv"), "--quiet"), tc.args...)
			code, stdout, stderr := runCLI(context.Background(), args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
				t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and %q", args, code, stdout, stderr, tc.code, tc.want)
			}
		}
		code, _, stderr := runCLI(context.Background(), append([]string{"serve", "--addr", "127.0.0.1:0"}, tc.args...)...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("serve %v: exit %d, stderr %q", tc.args, code, stderr)
		}
	}
	if hits.Load() != 0 {
		t.Errorf("%d requests sent despite a refused --metrics-addr", hits.Load())
	}
}
