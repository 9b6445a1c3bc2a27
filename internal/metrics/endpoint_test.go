package metrics

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

func TestConfigAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr, bind string
		loopback   bool
		field      string // the refused field, "" when accepted
	}{
		{"9464", "127.0.0.1:9464", true, ""},
		{":9464", "127.0.0.1:9464", true, ""},
		{"localhost:0", "127.0.0.1:0", true, ""},
		{"127.0.0.2:80", "127.0.0.2:80", true, ""},
		{"[::1]:9464", "[::1]:9464", true, ""},
		{"0.0.0.0:9464", "0.0.0.0:9464", false, ""},
		{"[::]:9464", "[::]:9464", false, ""},
		{"10.1.2.3:9464", "10.1.2.3:9464", false, ""},
		{"", "", false, "Addr"},
		{"127.0.0.1", "", false, "Addr"},
		{"127.0.0.1:", "", false, "Addr"},
		{"127.0.0.1:65536", "", false, "Addr"},
		{"127.0.0.1:-1", "", false, "Addr"},
		{"127.0.0.1:+80", "", false, "Addr"},
		{"127.0.0.1:http", "", false, "Addr"},
		{"metrics.example.net:9464", "", false, "Addr"},
		{"[fe80::1%eth0]:9464", "", false, "Addr"},
		{"http://127.0.0.1:9464", "", false, "Addr"},
		{"99999999999999999999", "", false, "Addr"},
	}
	for _, tc := range tests {
		c := Config{Addr: tc.addr}
		bind, loopback, err := c.bindAddr()
		if verr := c.Validate(); (verr == nil) != (err == nil) {
			t.Errorf("%q: Validate %v, bindAddr %v", tc.addr, verr, err)
		}
		if tc.field != "" {
			var v *valid.Error
			if !errors.As(err, &v) || v.Field() != tc.field {
				t.Errorf("%q: error %v, want one for %s", tc.addr, err, tc.field)
			}
			continue
		}
		if err != nil || bind != tc.bind || loopback != tc.loopback {
			t.Errorf("%q: %q loopback %v, %v; want %q loopback %v", tc.addr, bind, loopback, err, tc.bind, tc.loopback)
		}
	}
	for _, l := range []time.Duration{-time.Second, MaxLinger + time.Second} {
		var v *valid.Error
		if err := (Config{Addr: ":0", Linger: l}).Validate(); !errors.As(err, &v) || v.Field() != "Linger" {
			t.Errorf("linger %s: %v", l, err)
		}
	}
}

// scrape returns the text of one GET of url.
func scrape(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %v", url, resp.StatusCode, err)
	}
	return string(b)
}

// closed runs Close and fails (rather than hangs) if it has not returned
// within limit.
func closed(t *testing.T, e *Endpoint, limit time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- e.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(limit):
		t.Fatalf("Close still waiting after %s", limit)
	}
}

// TestLingerEndsOnTheLastScrape: after Finish, an endpoint that has been
// scraped waits for one more scrape, and that scrape reads the final
// values (ptuprobe_run_finished 1).
func TestLingerEndsOnTheLastScrape(t *testing.T) {
	t.Parallel()
	e, err := Listen(Config{Addr: "127.0.0.1:0", Linger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(scrape(t, e.URL()), "ptuprobe_run_finished 0") {
		t.Fatal("a running endpoint says it has finished")
	}
	e.Finish()
	if !e.WillLinger() {
		t.Fatal("a scraped endpoint would not wait for a last scrape")
	}
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get(e.URL())
		if err != nil {
			got <- err.Error()
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		got <- string(b)
	}()
	closed(t, e, 30*time.Second)
	if text := <-got; !strings.Contains(text, "ptuprobe_run_finished 1") || !strings.Contains(text, "go_goroutines") {
		t.Errorf("last scrape:\n%.400s", text)
	}
	if _, err := http.Get(e.URL()); err == nil {
		t.Error("still serving after Close")
	}
}

// TestNoLingerWithoutAScraper: nothing ever scraped, or a zero linger:
// Close does not wait.
func TestNoLingerWithoutAScraper(t *testing.T) {
	t.Parallel()
	e, err := Listen(Config{Addr: "127.0.0.1:0", Linger: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if e.WillLinger() {
		t.Error("an endpoint nobody scraped would wait")
	}
	closed(t, e, 30*time.Second)

	e, err = Listen(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	scrape(t, e.URL())
	if e.WillLinger() {
		t.Error("linger 0 would wait")
	}
	closed(t, e, 30*time.Second)
}

// TestLingerIsBounded: a scraper that stops coming does not hold Close
// past the linger.
func TestLingerIsBounded(t *testing.T) {
	t.Parallel()
	e, err := Listen(Config{Addr: "127.0.0.1:0", Linger: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	scrape(t, e.URL())
	closed(t, e, 30*time.Second)
}

func TestEndpointServesOnlyMetrics(t *testing.T) {
	t.Parallel()
	e, err := Listen(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	base := "http://" + e.Addr()
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{"GET", "/", 404}, {"GET", "/metrics/x", 404}, {"POST", "/metrics", 405},
		{"HEAD", "/metrics", 200}, {"GET", "/metrics", 200},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
}

func TestListenRefusesABusyPort(t *testing.T) {
	t.Parallel()
	e, err := Listen(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = Listen(Config{Addr: e.Addr()})
	var v *valid.Error
	if err == nil || errors.As(err, &v) {
		t.Fatalf("a busy port: %v, want a listen error", err)
	}
}

// gate is a collector whose Collect waits until release is closed, so a
// test can hold scrapes in flight; entered counts the scrapes inside.
type gate struct {
	desc    *prometheus.Desc
	entered chan struct{}
	release chan struct{}
}

func (g *gate) Describe(ch chan<- *prometheus.Desc) { ch <- g.desc }
func (g *gate) Collect(ch chan<- prometheus.Metric) {
	g.entered <- struct{}{}
	<-g.release
	ch <- prometheus.MustNewConstMetric(g.desc, prometheus.GaugeValue, 1)
}

// TestScrapesInFlightAreBounded: with MaxScrapesInFlight scrapes being
// gathered, one more is answered 503 at once rather than gathered too (each
// costs its encoding's memory); the held ones then complete.
func TestScrapesInFlightAreBounded(t *testing.T) {
	t.Parallel()
	e, err := Listen(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	g := &gate{
		desc:    prometheus.NewDesc("test_gate", "held", nil, nil),
		entered: make(chan struct{}, MaxScrapesInFlight+1), release: make(chan struct{}),
	}
	if err := e.Register(g); err != nil {
		t.Fatal(err)
	}
	status := make(chan int, MaxScrapesInFlight)
	client := &http.Client{Timeout: 5 * time.Second} // a scrape let through would wait for release
	get := func() int {
		resp, err := client.Get(e.URL())
		if err != nil {
			t.Error(err)
			return 0
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for range MaxScrapesInFlight {
		go func() { status <- get() }()
	}
	for range MaxScrapesInFlight {
		<-g.entered
	}
	if got := get(); got != http.StatusServiceUnavailable {
		close(g.release)
		t.Fatalf("scrape %d while %d are gathered: %d, want 503", MaxScrapesInFlight+1, MaxScrapesInFlight, got)
	}
	close(g.release)
	for range MaxScrapesInFlight {
		if got := <-status; got != 200 {
			t.Errorf("a held scrape: %d, want 200", got)
		}
	}
	if got := get(); got != 200 {
		t.Errorf("a scrape once the others are done: %d, want 200", got)
	}
}

// TestMetricsServerHasTimeouts: a client that opens a connection and
// sends half a request is cut off, rather than holding its socket for good.
func TestMetricsServerHasTimeouts(t *testing.T) {
	t.Parallel()
	e, err := Listen(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, limit := range []struct {
		name string
		d    time.Duration
	}{{"ReadTimeout", e.srv.ReadTimeout}, {"WriteTimeout", e.srv.WriteTimeout}, {"IdleTimeout", e.srv.IdleTimeout}, {"ReadHeaderTimeout", e.srv.ReadHeaderTimeout}} {
		if limit.d <= 0 {
			t.Errorf("%s is %v: a slow client holds its connection for good", limit.name, limit.d)
		}
	}
}
