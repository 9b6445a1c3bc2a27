package cmd

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/metrics"
	"github.com/ptuprobe/ptuprobe/sim"
)

// metricsFlags are --metrics-addr and --metrics-linger (the traffic
// commands and serve), and the endpoint they start.
type metricsFlags struct {
	addr   string
	linger time.Duration
	ep     *metrics.Endpoint
}

var metricsFlagNames = flagNames{"Addr": "--metrics-addr", "Linger": "--metrics-linger"}

func (m *metricsFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&m.addr, "metrics-addr", "", "serve live Prometheus metrics at http://ADDR/metrics while running: PORT or :PORT binds 127.0.0.1; another host (an IP address) must be named and gets a warning (docs/metrics.md)")
	fs.DurationVar(&m.linger, "metrics-linger", metrics.DefaultLinger, "when the run ends and something has scraped the metrics, wait at most this long for one last scrape (0: none)")
}

func (m *metricsFlags) config() metrics.Config {
	return metrics.Config{Addr: m.addr, Linger: m.linger}
}

// check refuses a malformed --metrics-addr or --metrics-linger (exit 2),
// without listening.
func (m *metricsFlags) check() error {
	c := m.config()
	if c.Addr == "" {
		c.Addr = "0" // checks the linger alone
	}
	return settingError(c.Validate(), metricsFlagNames)
}

// start listens when --metrics-addr asks for it, before anything is sent.
// A malformed address is a usage error (exit 2); one that cannot be bound
// (in use, not this machine's) a failure (exit 1), as serve --addr's is.
func (m *metricsFlags) start(stderr io.Writer, quiet bool) error {
	if m.addr == "" {
		return nil
	}
	ep, err := metrics.Listen(m.config())
	if isSetting(err) {
		return settingError(err, metricsFlagNames)
	} else if err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("--metrics-addr: %w", err)}
	}
	m.ep = ep
	if !ep.Loopback() {
		fmt.Fprintf(stderr, "ptuprobe: warning: metrics at %s are reachable from other machines, not only from this one\n", ep.URL())
	} else if !quiet {
		fmt.Fprintf(stderr, "metrics: %s\n", ep.URL())
	}
	return nil
}

// url is where the metrics are served; "" without --metrics-addr.
func (m *metricsFlags) url() string {
	if m.ep == nil {
		return ""
	}
	return m.ep.URL()
}

// traffic is the traffic metrics to count a run with; nil without
// --metrics-addr (a nil interface: campaign tests it against nil).
func (m *metricsFlags) traffic() (campaign.Meter, error) {
	if m.ep == nil {
		return nil, nil
	}
	t, err := m.ep.Traffic()
	if err != nil || t == nil {
		return nil, err
	}
	return t, nil
}

// simulator exposes a simulator's stats on the endpoint, if any.
func (m *metricsFlags) simulator(stats func() sim.Stats) error {
	if m.ep == nil {
		return nil
	}
	return m.ep.Simulator(stats)
}

// finish marks the run ended: every value is final from here on.
func (m *metricsFlags) finish() {
	if m.ep != nil {
		m.ep.Finish()
	}
}

// stop closes the endpoint, after one last scrape when something has been
// scraping (at most --metrics-linger after finish).
func (m *metricsFlags) stop(stderr io.Writer, quiet bool) {
	if m.ep == nil {
		return
	}
	if m.ep.WillLinger() && !quiet {
		fmt.Fprintf(stderr, "metrics: waiting up to %s for a last scrape (--metrics-linger)\n", m.linger)
	}
	m.ep.Close()
	m.ep = nil
}
