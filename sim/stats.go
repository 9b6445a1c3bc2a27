package sim

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// Stats is a snapshot of the simulator, served as JSON at GET /sim/stats.
// Keys appear only as "key-<n>", numbered from 0 in order of first sight
// (a caller without a key counts as one key); the key itself is never kept.
// EarlyReturns, RetriesOnTime and SDKRetries are the witness's counts (see
// the package doc), in total and per key. Advised summarizes, per source,
// every wait the simulator advised (Server.Advised has the last ones).
type Stats struct {
	Profile         string  `json:"profile"`
	Dialect         string  `json:"dialect"`
	Requests        uint64  `json:"requests"`
	Admitted        uint64  `json:"admitted"`
	Refused         uint64  `json:"refused"`
	Spilled         uint64  `json:"spilled"`
	SpillRefused    uint64  `json:"spill_refused"`
	Faults          uint64  `json:"faults"`
	Rejected        uint64  `json:"rejected"` // answered before the model: bad route, body, key
	TokenCounts     uint64  `json:"token_counts,omitempty"`
	InFlight        int64   `json:"in_flight"`
	UtilizationPct  float64 `json:"utilization_pct"`
	BurstAllowance  float64 `json:"burst_allowance_left_pct"`
	ReconciledOrg   uint64  `json:"reconciled_org,omitempty"`
	ReconciledKey   uint64  `json:"reconciled_key,omitempty"`
	ReconcileMissed uint64  `json:"reconcile_missed,omitempty"`
	UntrackedKeys   uint64  `json:"untracked_keys,omitempty"`

	// ForeignKeys counts the requests refused because they carried a key
	// other than Config.OnlyKey, or none (0 without OnlyKey); they are
	// among Rejected.
	ForeignKeys uint64 `json:"foreign_keys,omitempty"`
	// NeighbourBatches counts the batches the neighbour (Config.Neighbour) submitted.
	NeighbourBatches uint64 `json:"neighbour_batches,omitempty"`

	// EarlyReturns counts retries that arrived before the wait their
	// refusal advised had passed.
	EarlyReturns uint64 `json:"early_returns"`
	// RetriesOnTime counts retries that arrived at or after it.
	RetriesOnTime uint64 `json:"retries_on_time"`
	// SDKRetries counts requests that declare themselves an SDK's retry
	// (X-Stainless-Retry-Count > 0).
	SDKRetries uint64 `json:"sdk_retries"`
	// Retries counts the requests recognized as retries: comebacks
	// (early or on time) and declared SDK retries, each once.
	Retries uint64 `json:"retries"`
	// MarkedRetries counts comebacks recognized by their marker
	// (Idempotency-Key, x-ms-client-request-id): the client's own retries
	// of one call. UndeclaredRetries counts comebacks that are neither
	// marked nor declared SDK retries: an application loop, a gateway, a
	// retry owner that does not say so.
	MarkedRetries     uint64 `json:"marked_retries"`
	UndeclaredRetries uint64 `json:"undeclared_retries"`
	// HerdCompared counts the retries on time (of the last
	// MaxHerdLateness) compared with their key's median lateness against
	// one field, HerdSource (a Source… constant): the field whose retries
	// keep in step the most, the one the client honours. A retry's
	// lateness against a field is its arrival less its refusal's time and
	// that field's wait; HerdInStep counts those within HerdWindow of the
	// median: waits honoured without jitter, the client's own latency left
	// out (herdOf). HerdInStep ÷ HerdCompared is the referee's herd.
	HerdSource   string `json:"herd_source,omitempty"`
	HerdCompared uint64 `json:"herd_compared"`
	HerdInStep   uint64 `json:"herd_in_step"`
	// MaxCallRetries is the most retries of one call in a row of its
	// refusals that waited (came back more than QuickRetryWindow after
	// their refusal). MixedCalls counts the calls whose retries interleave
	// two owners' schedules (stackedRetry): a retry back at once (early,
	// within QuickRetryWindow) after one of the call that waited, or an
	// early retry that waited less than half the longest early wait of the
	// call before it, a backoff starting over.
	MaxCallRetries uint64 `json:"max_call_retries"`
	MixedCalls     uint64 `json:"mixed_calls"`
	// OverBudget counts retries, early or on time, that came back more
	// than Config.WitnessBudget after their refusal (0 without a budget).
	OverBudget uint64 `json:"over_budget"`
	// AdvisedWaitsPending counts refusals remembered and not answered
	// (yet): requests whose client has not come back.
	AdvisedWaitsPending uint64 `json:"advised_waits_pending"`
	// PendingPastBudget counts the pending refusals older than
	// Config.WitnessBudget (0 without a budget): a client still sleeping
	// past its budget, or one that gave up. Nothing on the wire tells
	// them apart, not even whether the client is still running (a loop
	// that gives up each refusal and goes on with new calls is).
	PendingPastBudget uint64 `json:"pending_past_budget,omitempty"`
	// AdvisedWaitsEvicted counts refusals forgotten before their retry
	// came back, to keep the witness's memory within MaxAdvisedWaits.
	AdvisedWaitsEvicted uint64 `json:"advised_waits_evicted,omitempty"`

	// Advised counts the waits written per source (retry-after-ms,
	// retry-after, x-ratelimit-reset-tokens…), with their least, greatest
	// and summed wall milliseconds as written; Refusals counts the
	// refusals that wrote them.
	Advised         []AdviceStats `json:"advised,omitempty"`
	AdvisedRefusals uint64        `json:"advised_refusals,omitempty"`
	// AdviceEvicted counts entries the record of advised waits
	// (Server.Advised) forgot to keep within MaxAdvice.
	AdviceEvicted uint64 `json:"advice_evicted,omitempty"`

	Standard *CeilingStats  `json:"standard,omitempty"`
	Orgs     []CeilingStats `json:"orgs,omitempty"`
	Keys     []KeyStats     `json:"keys"`
}

// CeilingStats is the state of one pair of windows: requests in the
// current second and tokens in the current minute.
type CeilingStats struct {
	Name               string `json:"name"`
	RequestsThisSecond int64  `json:"requests_this_window"`
	TokensThisMinute   int64  `json:"tokens_this_minute"`
}

// KeyStats are one key's counters, identified only by its index.
type KeyStats struct {
	Key           string        `json:"key"`
	Org           int           `json:"org"`
	Admitted      uint64        `json:"admitted"`
	Refused       uint64        `json:"refused"`
	Ceiling       *CeilingStats `json:"ceiling,omitempty"`
	EarlyReturns  uint64        `json:"early_returns"`
	RetriesOnTime uint64        `json:"retries_on_time"`
	SDKRetries    uint64        `json:"sdk_retries"`
}

// Stats returns a snapshot of the counters and the current utilization.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	st := s.counted()
	late := slices.Clone(s.late.ring)
	s.mu.Unlock()
	// Sorting a full record takes milliseconds: not under the lock.
	st.HerdSource, st.HerdCompared, st.HerdInStep = herdOf(late)
	return st
}

// Returns are two of the witness's counts, without the rest of Stats
// (whose herd sorts up to 65,536 retries): the retries that came back
// before their advised wait, and those declared as an SDK's own.
func (s *Server) Returns() (early, sdk uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n.earlyReturns, s.n.sdkRetries
}

// counted is Stats but the herd. Called with s.mu held.
func (s *Server) counted() Stats {
	now := s.clock.Now()
	st := Stats{
		Profile:  s.cfg.Profile,
		Dialect:  s.cfg.Dialect,
		Requests: s.n.requests, Admitted: s.n.admitted, Refused: s.n.refused,
		Spilled: s.n.spilled, SpillRefused: s.n.spillRefused, Faults: s.n.faults,
		Rejected: s.n.rejected, TokenCounts: s.n.tokenCounts, ForeignKeys: s.n.foreignKeys,
		InFlight:            s.inFlight.Load(),
		ReconciledOrg:       s.n.reconciledOrg,
		ReconciledKey:       s.n.reconciledKey,
		ReconcileMissed:     s.n.reconcileMissed,
		UntrackedKeys:       s.n.untrackedKeys,
		EarlyReturns:        s.n.earlyReturns,
		RetriesOnTime:       s.n.retriesOnTime,
		SDKRetries:          s.n.sdkRetries,
		Retries:             s.n.retries,
		MarkedRetries:       s.n.markedRetries,
		UndeclaredRetries:   s.n.undeclaredRetries,
		OverBudget:          s.n.overBudget,
		MaxCallRetries:      s.n.maxCallRetries,
		MixedCalls:          s.n.mixedCalls,
		AdvisedWaitsPending: uint64(len(s.advised.byID)),
		PendingPastBudget:   s.pendingPastBudget(now),
		AdvisedWaitsEvicted: s.advised.evicted,
		Advised:             s.advice.stats(),
		AdvisedRefusals:     s.advice.refusals,
		AdviceEvicted:       s.advice.evicted,
		Keys:                make([]KeyStats, 0, len(s.keys.order)),
	}
	s.lim.report(now, &st)
	if s.standard != nil {
		st.Standard = &CeilingStats{Name: "standard", RequestsThisSecond: s.standard.requests.used, TokensThisMinute: s.standard.tokens.used}
	}
	for _, k := range s.keys.order {
		ks := KeyStats{
			Key: "key-" + strconv.Itoa(k.index-1), Org: k.org, Admitted: k.admitted, Refused: k.refused,
			EarlyReturns: k.earlyReturns, RetriesOnTime: k.retriesOnTime, SDKRetries: k.sdkRetries,
		}
		if k.limits != nil {
			ks.Ceiling = &CeilingStats{Name: ks.Key, RequestsThisSecond: k.limits.requests.used, TokensThisMinute: k.limits.tokens.used}
		}
		st.Keys = append(st.Keys, ks)
	}
	return st
}

func (s *Server) serveStats(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET")
		s.writeError(w, http.StatusMethodNotAllowed, "405", "Method not allowed; use GET")
		return
	}
	b, err := json.MarshalIndent(s.Stats(), "", "  ")
	if err != nil {
		s.writeError(w, http.StatusInternalServerError, "500", "could not encode stats")
		return
	}
	w.Header()["Content-Type"] = jsonContentType
	w.Write(append(b, '\n'))
}

// pendingPastBudget counts the remembered refusals more than the
// witness's budget old at now. Called with s.mu held.
func (s *Server) pendingPastBudget(now time.Time) uint64 {
	b := s.cfg.WitnessBudget
	if b <= 0 || len(s.advised.byID) == 0 {
		return 0
	}
	age, budget := now.Sub(s.advised.epoch), s.modelTime(b.Milliseconds())
	var n uint64
	for _, w := range s.advised.byID {
		if age-w.at > budget {
			n++
		}
	}
	return n
}
