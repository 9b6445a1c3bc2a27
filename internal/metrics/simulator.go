package metrics

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ptuprobe/ptuprobe/sim"
)

// Simulator is the embedded simulator's metrics: a collector that reads
// sim.Stats once per scrape, so every value is the simulator's own count
// (the ones /sim/stats and the stop summary show) and nothing is counted
// twice. Keys are not labels: the per-key counts stay in /sim/stats.
type Simulator struct {
	stats func() sim.Stats
}

// NewSimulator returns a collector over stats (a *sim.Server's Stats).
func NewSimulator(stats func() sim.Stats) *Simulator { return &Simulator{stats: stats} }

func simDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("ptuprobe_sim_"+name, help, labels, nil)
}

var (
	simRequests     = simDesc("requests_total", "Requests that reached the simulator (admitted, refused, faults and rejected).")
	simAdmitted     = simDesc("admitted_total", "Requests admitted (by the PTU deployment, the standard one, or spilled to it).")
	simRefused      = simDesc("refused_total", "Requests refused for capacity (429).")
	simSpilled      = simDesc("spilled_total", "Requests the PTU deployment refused that the standard deployment admitted (spillover).")
	simSpillRefused = simDesc("spill_refused_total", "Requests refused by both the PTU deployment and the spillover.")
	simFaults       = simDesc("faults_total", "Injected faults (--fault-rate).")
	simRejected     = simDesc("rejected_total", "Requests answered before the model: bad route, body or key.")
	simInFlight     = simDesc("in_flight", "Requests being answered.")
	simUtilization  = simDesc("utilization_ratio", "The PTU deployment's utilization (1 = 100%); absent for the gateway profile.")
	simAllowance    = simDesc("burst_allowance_left_ratio", "The PTU deployment's burst allowance left (1 = all of it); absent for the gateway profile.")
	simEarly        = simDesc("early_returns_total", "Retries that came back before the wait their refusal advised (the witness).")
	simOnTime       = simDesc("retries_on_time_total", "Retries that came back at or after their advised wait.")
	simSDK          = simDesc("sdk_retries_total", "Requests declaring themselves an SDK's retry (X-Stainless-Retry-Count > 0).")
	simRefusals     = simDesc("advised_refusals_total", "Refusals that advised a wait.")
	simAdvised      = simDesc("advised_waits_total", "Advised waits written, by the field written.", "source")
	simAdvisedSum   = simDesc("advised_wait_seconds_total", "Sum of the advised waits written, by field, in wall seconds as written.", "source")
	simAdvisedMax   = simDesc("advised_wait_max_seconds", "The longest advised wait written, by field, in wall seconds.", "source")
	simKeys         = simDesc("keys", "Keys tracked (each counted under key-<n> in /sim/stats, never by value).")
	simAllDescs     = []*prometheus.Desc{simRequests, simAdmitted, simRefused, simSpilled, simSpillRefused, simFaults, simRejected, simInFlight, simUtilization, simAllowance, simEarly, simOnTime, simSDK, simRefusals, simAdvised, simAdvisedSum, simAdvisedMax, simKeys}
	knownSources    = map[string]bool{
		sim.SourceRetryAfterMS: true, sim.SourceRetryAfter: true, sim.SourceResetRequests: true, sim.SourceResetTokens: true,
		sim.SourceAnthropicRequestsReset: true, sim.SourceAnthropicTokensReset: true, sim.SourceRateLimit: true,
		sim.SourceRateLimitReset: true, sim.SourceRetryInfo: true,
	}
)

// Describe implements prometheus.Collector.
func (s *Simulator) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range simAllDescs {
		ch <- d
	}
}

// Collect implements prometheus.Collector: one snapshot per scrape.
func (s *Simulator) Collect(ch chan<- prometheus.Metric) {
	st := s.stats()
	counter := func(d *prometheus.Desc, v uint64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter(simRequests, st.Requests)
	counter(simAdmitted, st.Admitted)
	counter(simRefused, st.Refused)
	counter(simSpilled, st.Spilled)
	counter(simSpillRefused, st.SpillRefused)
	counter(simFaults, st.Faults)
	counter(simRejected, st.Rejected)
	gauge(simInFlight, float64(st.InFlight))
	if st.Profile == sim.ProfilePTU {
		gauge(simUtilization, st.UtilizationPct/100)
		gauge(simAllowance, st.BurstAllowance/100)
	}
	counter(simEarly, st.EarlyReturns)
	counter(simOnTime, st.RetriesOnTime)
	counter(simSDK, st.SDKRetries)
	counter(simRefusals, st.AdvisedRefusals)
	for _, a := range st.Advised {
		if !knownSources[a.Source] {
			continue // a source this collector does not know: no free text as a label
		}
		counter(simAdvised, a.Count, a.Source)
		ch <- prometheus.MustNewConstMetric(simAdvisedSum, prometheus.CounterValue, float64(a.SumMS)/1000, a.Source)
		gauge(simAdvisedMax, float64(a.MaxMS)/1000, a.Source)
	}
	gauge(simKeys, float64(len(st.Keys)))
}
