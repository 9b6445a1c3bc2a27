package cmd

import (
	"fmt"
	"io"
	"net"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/tokenize"
	"github.com/ptuprobe/ptuprobe/sim"
)

// DefaultServeAddr is where `ptuprobe serve` listens: loopback only.
const DefaultServeAddr = "127.0.0.1:8089"

type serveCmd struct {
	cfg               sim.Config
	profile           *simProfile
	addr              string
	maxConnsPerClient int
	mf                metricsFlags
}

// run serves the simulator until Ctrl-C.
func (s *serveCmd) run(c *cobra.Command, _ []string) error {
	if err := s.profile.resolve(); err != nil {
		return err
	}
	if err := s.cfg.Validate(); err != nil {
		return settingError(err, simFlagNames("sim-"))
	}
	if s.cfg.Tokens == nil {
		// No client to follow: the vocabulary of the deployment's name.
		tok, err := tokenize.Get(tokenize.Default(s.cfg.Deployment))
		if err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
		s.cfg.Tokens = tok
	}
	if _, port, err := net.SplitHostPort(s.addr); err != nil || !validPort(port) {
		return usageError("--addr %q: want host:port with a port from 0 to 65535, e.g. %s", s.addr, DefaultServeAddr)
	}
	if s.maxConnsPerClient < 0 {
		return usageError("--max-conns-per-client must not be negative (0: no limit)")
	}
	if err := s.mf.check(); err != nil {
		return err
	}
	if err := s.mf.start(c.ErrOrStderr(), true); err != nil { // the banner says where
		return err
	}
	defer s.mf.stop(c.ErrOrStderr(), false)
	run, err := sim.Start(c.Context(), s.cfg, s.addr, sim.MaxConnsPerClient(s.maxConnsPerClient))
	if err != nil {
		return &ExitError{Code: ExitFailure, Err: err}
	}
	defer run.Close()
	if err := s.mf.simulator(run.Server.Stats); err != nil {
		return err
	}
	printServeBanner(c, s.cfg, run, s.mf.url())
	select {
	case <-c.Context().Done():
	case <-run.Done():
	}
	if err := run.Close(); err != nil {
		return &ExitError{Code: ExitFailure, Err: fmt.Errorf("simulator: %w", err)}
	}
	s.mf.finish()
	fmt.Fprintln(c.ErrOrStderr(), "simulator stopped")
	printWitness(c.ErrOrStderr(), run.Server.Stats())
	return nil
}

func init() {
	register(func() *cobra.Command {
		sc := &serveCmd{cfg: sim.DefaultConfig(), addr: DefaultServeAddr, maxConnsPerClient: sim.DefaultMaxConnsPerClient}
		c := &cobra.Command{
			Use:   "serve",
			Short: "Run the embedded PTU simulator (or the gateway profile), in any vendor's dialect, on loopback",
			Long: `serve runs alone the simulator that the traffic commands use when no target
is given, on loopback; its --sim-* flags (the model, the profile, the
dialect, faults) are the traffic commands' and are listed once, in
'ptuprobe help simulator'. It prints its URL and a command to try; Ctrl-C
stops it. GET /sim/stats shows what it admitted and refused, and every wait
it advised, per source.

It is also a witness of the client: per key it counts retries that came back
before the wait their 429 advised (early_returns), at or after it
(retries_on_time), and requests declaring themselves SDK retries
(X-Stainless-Retry-Count > 0); a retry is the same key, deployment and call
(its Idempotency-Key or x-ms-client-request-id, else its body). On Ctrl-C it
prints these counts per key (key-0, key-1…, never the key); 'ptuprobe
referee' grades them. --metrics-addr serves them live to Prometheus
(docs/metrics.md), waiting up to --metrics-linger for a last scrape.

Like any server it bounds what a client may hold: a request must arrive
within ` + campaign.Roughly(sim.BodyReadTimeout) + ` (its headers within ` + campaign.Roughly(sim.HeaderReadTimeout) + `), an idle connection is closed
after ` + campaign.Roughly(sim.IdleTimeout) + `, and one address may hold --max-conns-per-client connections;
one more is answered 503 and closed. Answers are never cut short.`,
			Args: noArgs,
			Example: `  ptuprobe serve
  ptuprobe serve --sim-ptu 50 --sim-utilization-header --sim-spillover-deployment sim-standard
  ptuprobe serve --sim-profile gateway --sim-gateway-retry-after --addr 127.0.0.1:9000
  ptuprobe serve --sim-fault-rate 0.05 --sim-faults http-date,missing,reset
  ptuprobe serve --sim-dialect openai --sim-omit-retry-headers
  ptuprobe serve --metrics-addr :9464   # Prometheus metrics at http://127.0.0.1:9464/metrics`,
			RunE: sc.run,
		}
		c.Flags().StringVar(&sc.addr, "addr", sc.addr, "address to listen on (loopback unless you say otherwise; port 0 picks a free one)")
		c.Flags().IntVar(&sc.maxConnsPerClient, "max-conns-per-client", sc.maxConnsPerClient, "connections one client address may hold open at once; one more is answered 503 (0: no limit; raise it for a traffic command whose --max-in-flight is higher)")
		sc.profile = addSimFlags(c.Flags(), &sc.cfg, "sim-")
		sc.mf.add(c.Flags())
		alias(c, simRenames())
		return c
	})
}

// validPort accepts a decimal port number from 0 (any free port) to 65535.
func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

// printServeBanner says where the simulator is and how to aim ptuprobe at
// it. The first line is the URL alone so scripts can read it.
func printServeBanner(c *cobra.Command, cfg sim.Config, run *sim.Running, metricsURL string) {
	out := c.OutOrStdout()
	fmt.Fprintln(out, run.URL)
	if host, _, err := net.SplitHostPort(run.Addr); err == nil {
		if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
			fmt.Fprintf(c.ErrOrStderr(), "warning: listening on %s, not only on loopback\n", run.Addr)
		}
	}
	if cfg.Profile == sim.ProfileGateway {
		fmt.Fprintf(out, "simulated gateway: per key %d requests/s and %d tokens/min, per organization %d requests/s and %d tokens/min\n",
			cfg.GatewayKeyRPS, cfg.GatewayKeyTPM, cfg.GatewayOrgRPS, cfg.GatewayOrgTPM)
	} else {
		drain := cfg.DrainTokensPerSecond()
		perReq := cfg.EstimatedCost(1000, 0, 65) // a default client request's mean actual cost
		fmt.Fprintf(out, "simulated PTU deployment %q: %g PTU, drains %.0f tokens/s (about %.1f requests/s of ~1,000 prompt + 100 max tokens)\n",
			cfg.Deployment, cfg.PTU, drain, drain/perReq)
		if cfg.SpilloverDeployment != "" {
			fmt.Fprintf(out, "spillover to standard deployment %q: %d tokens/min, %d requests/min\n", cfg.SpilloverDeployment, cfg.StandardTPM, cfg.StandardRPM)
		}
	}
	if cfg.Dialect != sim.DialectAzure {
		fmt.Fprintf(out, "dialect: %s\n", cfg.Dialect)
	}
	fmt.Fprintf(out, "try:   %s\n", tryCommand(cfg, run.URL))
	fmt.Fprintf(out, "stats: %s/sim/stats\n", run.URL)
	if metricsURL != "" {
		fmt.Fprintf(out, "metrics: %s\n", metricsURL)
	}
	fmt.Fprintln(out, "Ctrl-C stops it.")
}

// tryCommand is a first call to paste: ptuprobe where its client speaks
// the dialect, else curl with the dialect's request.
func tryCommand(cfg sim.Config, url string) string {
	switch cfg.Dialect {
	case sim.DialectAnthropic:
		return "curl -s " + url + cfg.Path(false) + ` -H 'anthropic-version: 2023-06-01' -H 'content-type: application/json' -d '{"model":"` +
			cfg.Deployment + `","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}'`
	case sim.DialectGemini:
		return "curl -s " + url + cfg.Path(false) + ` -H 'content-type: application/json' -d '{"contents":[{"parts":[{"text":"hi"}]}]}'`
	case sim.DialectOpenAI:
		// A plain --url: the OpenAI API, sent without a key when none is set.
		return "ptuprobe burst --url " + url + cfg.Path(false) + " --model " + cfg.Deployment
	}
	if cfg.Profile == sim.ProfileGateway {
		return "ptuprobe burst --url " + url + "/v1/chat/completions"
	}
	// An Azure target needs its key; the simulator takes any.
	return "AZURE_OPENAI_API_KEY=sim ptuprobe burst --endpoint " + url + " --deployment " + cfg.Deployment
}

// summaryKeys is how many keys the stop summary names, a line each;
// /sim/stats lists them all while the simulator runs.
const summaryKeys = 20

// printWitness is the stop summary: per key, what the simulator saw the
// client do with the waits it advised. Keys appear only as key-<n>.
func printWitness(w io.Writer, st sim.Stats) {
	if len(st.Keys) == 0 {
		fmt.Fprintln(w, "no request reached the model")
		return
	}
	for i, k := range st.Keys {
		if i == summaryKeys {
			fmt.Fprintf(w, "… and %s\n", plural(uint64(len(st.Keys)-i), "more key", "more keys"))
			break
		}
		fmt.Fprintf(w, "%s: %s\n", k.Key, witnessLine(k.Admitted+k.Refused, k.Refused, k.EarlyReturns, k.RetriesOnTime, k.SDKRetries))
	}
	if len(st.Keys) > 1 || st.UntrackedKeys > 0 {
		fmt.Fprintf(w, "all keys: %s\n", witnessLine(st.Admitted+st.Refused, st.Refused, st.EarlyReturns, st.RetriesOnTime, st.SDKRetries))
	}
	if st.UntrackedKeys > 0 {
		fmt.Fprintf(w, "%s came from keys past --sim-max-keys, which have no line of their own\n", plural(st.UntrackedKeys, "request", "requests"))
	}
	if st.AdvisedWaitsEvicted > 0 {
		fmt.Fprintf(w, "%s forgotten before their retry came back (the simulator remembers the last %s), so the counts above are a floor\n",
			plural(st.AdvisedWaitsEvicted, "refusal was", "refusals were"), num.Grouped(sim.MaxAdvisedWaits, 0))
	}
}

// witnessLine is one line of the stop summary, after the key's name.
func witnessLine(requests, refused, early, onTime, sdk uint64) string {
	their := "their"
	if early == 1 {
		their = "its"
	}
	return fmt.Sprintf("%s, %d refused, %d came back before %s advised wait, %d on time, %s",
		plural(requests, "request", "requests"), refused, early, their, onTime,
		plural(sdk, "declared SDK retry", "declared SDK retries"))
}

// plural is n and the words that fit it.
func plural(n uint64, one, many string) string { return num.Count(n, one, many) }
