package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Path is where an Endpoint serves the metrics.
const Path = "/metrics"

// DefaultLinger is Config.Linger's usual value: Prometheus's most common
// scrape interval, so a scraper that has been watching gets one more look.
const DefaultLinger = 15 * time.Second

// MaxLinger bounds Config.Linger.
const MaxLinger = time.Hour

// shutdownGrace bounds how long Close lets a scrape in progress finish.
const shutdownGrace = 2 * time.Second

// MaxScrapesInFlight bounds the scrapes gathered at once; one more is
// answered 503 at once. A scrape costs about 150 KB while it is gathered
// and encoded, so 6,000 at once once took serve from 70 MB to 908 MB; a
// Prometheus server scrapes one at a time, and node_exporter's default
// limit is 40.
const MaxScrapesInFlight = 8

// Timeouts of the metrics server: a scrape is a small GET, answered from
// memory in milliseconds, so a client that takes longer to send it, or to
// read the answer, is not a scraper (Prometheus's default scrape timeout
// is 10 s).
const (
	scrapeReadTimeout  = 10 * time.Second
	scrapeWriteTimeout = 30 * time.Second
	scrapeIdleTimeout  = time.Minute
)

// Config says where an Endpoint listens and how long it lingers.
type Config struct {
	// Addr is [HOST]:PORT or PORT. Without a host it binds 127.0.0.1; a
	// host is an IP address or "localhost"; port 0 picks a free port.
	Addr string
	// Linger is the longest Close waits for a scrape after Finish, when
	// something has scraped before; 0 closes at once.
	Linger time.Duration
}

// Validate checks the address's form and the linger, without listening.
func (c Config) Validate() error {
	if _, _, err := c.bindAddr(); err != nil {
		return err
	}
	if c.Linger < 0 || c.Linger > MaxLinger {
		return valid.Errorf("Linger", "must be between 0 and %s", MaxLinger)
	}
	return nil
}

// bindAddr resolves Addr to the host:port to listen on and whether that
// host is loopback.
func (c Config) bindAddr() (addr string, loopback bool, err error) {
	a := c.Addr
	if a != "" && strings.Trim(a, "0123456789") == "" {
		a = ":" + a // a bare port
	}
	host, port, err := net.SplitHostPort(a)
	if err != nil || !validPort(port) {
		return "", false, valid.Errorf("Addr", "%q: want [HOST]:PORT with a port from 0 to 65535, e.g. :9464 or 127.0.0.1:9464", clip(c.Addr))
	}
	switch host {
	case "", "localhost":
		host = "127.0.0.1"
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return "", false, valid.Errorf("Addr", "%q: the host must be an IP address (or localhost), not a name to resolve", clip(c.Addr))
	}
	return net.JoinHostPort(ip.String(), port), ip.IsLoopback(), nil
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535 && p != "" && p[0] != '+' && p[0] != '-'
}

// clip bounds a value echoed in an error.
func clip(s string) string {
	if r := []rune(s); len(r) > 40 {
		return string(r[:40]) + "…"
	}
	return s
}

// Endpoint serves GET /metrics from a private registry (the Go runtime's
// and the process's collectors included) until Close.
type Endpoint struct {
	reg      *prometheus.Registry
	handler  http.Handler
	srv      *http.Server
	addr     string
	loopback bool
	linger   time.Duration
	finished prometheus.Gauge
	done     chan struct{}
	serveErr error

	scraped    atomic.Bool   // some scrape was served
	ended      atomic.Bool   // Finish was called
	final      chan struct{} // closed once a scrape that began after Finish is served
	finalOnce  sync.Once
	finishOnce sync.Once
	finishedAt time.Time
	closeOnce  sync.Once
}

// Listen validates c, listens and serves in the background. An error is a
// *valid.Error for a malformed Addr or Linger, else the listen's error.
func Listen(c Config) (*Endpoint, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	addr, loopback, _ := c.bindAddr()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	e := &Endpoint{
		reg: prometheus.NewRegistry(), addr: ln.Addr().String(), loopback: loopback,
		linger: c.Linger, done: make(chan struct{}), final: make(chan struct{}),
		finished: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "ptuprobe_run_finished",
			Help: "1 once the run has ended (every value is final), 0 while it runs.",
		}),
	}
	e.reg.MustRegister(e.finished,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	e.handler = promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{
		ErrorHandling: promhttp.ContinueOnError, MaxRequestsInFlight: MaxScrapesInFlight,
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+Path, e.serveMetrics)
	e.srv = &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: scrapeReadTimeout,
		ReadTimeout:       scrapeReadTimeout,
		WriteTimeout:      scrapeWriteTimeout,
		IdleTimeout:       scrapeIdleTimeout,
		MaxHeaderBytes:    16 << 10,
	}
	go func() {
		defer close(e.done)
		if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			e.serveErr = err
		}
	}()
	return e, nil
}

// serveMetrics serves one scrape and notes whether it began after Finish:
// such a scrape has read every final value.
func (e *Endpoint) serveMetrics(w http.ResponseWriter, r *http.Request) {
	afterEnd := e.ended.Load()
	e.handler.ServeHTTP(w, r)
	e.scraped.Store(true)
	if afterEnd {
		e.finalOnce.Do(func() { close(e.final) })
	}
}

// URL is the metrics' URL.
func (e *Endpoint) URL() string { return "http://" + e.addr + Path }

// Loopback reports whether the endpoint is reachable from this machine only.
func (e *Endpoint) Loopback() bool { return e.loopback }

// Register adds collectors to the endpoint's registry.
func (e *Endpoint) Register(cs ...prometheus.Collector) error {
	for _, c := range cs {
		if err := e.reg.Register(c); err != nil {
			return err
		}
	}
	return nil
}

// Traffic registers the traffic metrics on the endpoint.
func (e *Endpoint) Traffic() (*Traffic, error) { return NewTraffic(e.reg) }

// Simulator registers the metrics of a simulator whose stats are read by
// stats (a *sim.Server's Stats).
func (e *Endpoint) Simulator(stats func() sim.Stats) error {
	return e.reg.Register(NewSimulator(stats))
}

// Finish marks the run ended: ptuprobe_run_finished becomes 1 and the
// linger starts. Every value observed before it is final. Safe to call
// more than once.
func (e *Endpoint) Finish() {
	e.finishOnce.Do(func() {
		e.finished.Set(1)
		e.finishedAt = time.Now()
		e.ended.Store(true)
	})
}

// WillLinger reports whether Close would wait: something has scraped, the
// linger is not zero and no scrape has yet read the final values.
func (e *Endpoint) WillLinger() bool {
	if e.linger <= 0 || !e.scraped.Load() {
		return false
	}
	select {
	case <-e.final:
		return false
	default:
		return true
	}
}

// Close finishes the run if need be, waits for a last scrape when
// WillLinger says so (until Linger after Finish at most), and stops the
// server, letting a scrape in progress end. It returns an error only if
// the server had failed.
func (e *Endpoint) Close() error {
	e.closeOnce.Do(func() {
		e.Finish()
		if e.WillLinger() {
			t := time.NewTimer(time.Until(e.finishedAt.Add(e.linger)))
			select {
			case <-e.final:
			case <-t.C:
			}
			t.Stop()
		}
		ctx, cancel := context.WithTimeout(context.Background(), shutdownGrace)
		defer cancel()
		if err := e.srv.Shutdown(ctx); err != nil {
			e.srv.Close()
		}
		<-e.done
	})
	return e.serveErr
}
