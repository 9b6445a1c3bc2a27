package policylab

import (
	"time"

	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Row is one cell of the lab's sweep: one policy at one load with one
// fleet size, over its repeats. policies.csv has one line per Row.
type Row struct {
	// Policy is the row's label: its policy's name, and coordinatedSuffix
	// for a coordinated row; Name is the policy's name alone, and Traits
	// what the verdict reads of it (never the name).
	Policy string
	Name   string
	Traits policy.Traits
	// Models names the client a policy models when it does not get the
	// lab's fair caps (none, sdk, stacked): "" for a policy under the
	// fair budget and attempts cap.
	Models string
	// Load is the load as given (`1.5x`, or a rate such as `8/s`); LoadX
	// is it as a multiple of Capacity (-1 when the capacity is unknown).
	Load  string
	LoadX float64
	// RatePerS is the offered arrival rate, requests per second.
	RatePerS float64
	Clients  int
	// Fallback: the policy redirects to a second deployment (the
	// simulator's standard one), whose capacity the others do not have;
	// it is ranked, never recommended for one deployment.
	Fallback    bool
	MaxAttempts int // the policy's attempts cap, the first included
	// OwnCaps: the policy keeps caps of its own (a modelled client, or a
	// custom spec that sets them), so it is the same row under either
	// cap; SDKCap: a fair policy run under the SDKs' cap
	// (sdkMaxAttempts) rather than the lab's.
	OwnCaps, SDKCap bool
	Budget          time.Duration // the policy's latency budget per request; 0: none
	Repeats         int

	// The lab's measure (measure.go), over the steady-state window: per
	// request offered there, the share answered 2xx within the SLO, the
	// load, the latency of the successes.
	//
	// Offered are the window's requests, summed over the repeats.
	Offered int
	// SuccessInSLOPct is the share of them answered 2xx within the SLO,
	// the mean over the repeats, and CILow, CIHigh its Student-t 95%
	// interval over them (the mean itself with one repeat).
	SuccessInSLOPct, CILow, CIHigh float64
	// AttemptsPerRequest and HTTP429PerRequest are the load the policy
	// placed on the deployment per offered request, means over the
	// repeats (-1 with nothing offered).
	AttemptsPerRequest, HTTP429PerRequest float64
	// GaveUpLocal are the window's requests given up by their owner
	// without an answer (never sent, or held past their budget), summed:
	// failures, shown apart.
	GaveUpLocal int
	// SuccessP50MS and SuccessP99MS are the latencies of the window's
	// successes (2xx within the budget), arrival to answer, pooled over
	// the repeats (-1 with none).
	SuccessP50MS, SuccessP99MS float64
	// SuccessLatencies are those latencies, ms, sorted: the latency ECDF.
	SuccessLatencies []float64
	// DriftPts is the measure's second half of the window against its
	// first, the mean over the repeats; Steady is false when that drift
	// is clear (its interval excludes 0) and at least steadyPts: the
	// measure still moves, and a longer plan could rank the row
	// otherwise.
	DriftPts float64
	Steady   bool
	// Measures are the repeats' measures, in repeat order: repeat k of
	// every row met the same arrivals and seeds, so rows are compared
	// repeat by repeat (paired).
	Measures []repeatMeasure

	// Counts over every arrival of the plan (warm-up and tail included),
	// summed over the repeats.
	Requests   int // requests the plan offered
	Succeeded  int // requests answered 2xx within the budget
	GaveUp     int // requests given up: refused last, or held past their budget without being sent
	Redirected int // requests with an attempt sent to the fallback
	Attempts   int // attempts sent, retries and redirects included
	HTTP429    int // attempts answered 429
	OverBudget int // requests whose last answer came after their budget (not counted as succeeded)
	// EarlyRetries is the simulator's count of retries that came back
	// before the wait advised to the attempt before them (against a real
	// target, the client's own count from what it recorded).
	EarlyRetries int

	// SuccessPct and its spread over the repeats (min, max).
	SuccessPct, SuccessPctMin, SuccessPctMax float64
	// GoodputPerS is the successes answered while the plan's arrivals
	// were on, per second of the plan (the deployment's useful throughput
	// under that load, not counting the tail of retries after the last
	// arrival), the mean over the repeats; GoodputMin and GoodputMax its
	// spread.
	GoodputPerS, GoodputMin, GoodputMax float64
	// CapacitySharePct is GoodputPerS ÷ Capacity × 100 (-1 when the
	// capacity is unknown); it can pass 100 by a rested deployment's
	// burst allowance and by what a fallback serves.
	CapacitySharePct float64
	// AttemptsPerSuccess and HTTP429PerSuccess: Attempts and HTTP429 ÷
	// Succeeded (-1 with no success).
	AttemptsPerSuccess, HTTP429PerSuccess float64
	// E2E percentiles of the successful requests, in ms (-1 with none):
	// first send to last answer, every wait and hold included.
	E2EP50MS, E2EP99MS, E2EMaxMS float64
	// SuccessE2E are the successful requests' end-to-end latencies in ms,
	// sorted, pooled over the repeats: the latency ECDF.
	SuccessE2E []float64

	// Coordinated: the fleet's clients shared their retry owners' state
	// through the lab's Coordination (Policy then ends in
	// coordinatedSuffix); in a coordinated lab the other rows' clients
	// each kept their own, as separate processes do.
	Coordinated bool
	// ClientSuccessPctMin and ClientSuccessPctMax are the lowest and the
	// highest success share of one client of the fleet, over the repeats
	// (-1 when not measured: the virtual clock's rows).
	ClientSuccessPctMin, ClientSuccessPctMax float64
	// ClientSpreadPts is the widest gap, in points, between the slowest
	// and the fastest client's success share within one repeat (-1 when
	// not measured): what "no client starved" is judged on, run by run.
	ClientSpreadPts float64
	// Fallbacks are the decisions of a coordinated row's clients taken on
	// their own state because the Coordinator failed (Redis slower than
	// its call timeout, or down), summed over the repeats.
	Fallbacks int64
	// CoordinatorCalls are its clients' calls to the Coordinator, the
	// shared decisions of which Fallbacks are a part.
	CoordinatorCalls int64
}

// Sweep is what a lab measured: a Row per (policy, load, clients) in the
// order policies × loads × clients, and what the rows are measured against.
type Sweep struct {
	Rows []Row
	// Capacity is what the deployment sustains, in requests per second of
	// the lab's request shape (see CapacityOf); 0 when unknown (a real
	// target without --capacity).
	Capacity float64
	// CapacityFormula says how Capacity was found, in plain words.
	CapacityFormula string
	// Limiter names the limiter measured: "ptu", "gateway", "window", or
	// "the named target".
	Limiter string
	// Profile names the simulator's profile the lab ran (--sim-profile:
	// a named profile or a file's base name), Fit how well it fits its
	// recorded run: on a poor fit nothing is recommended (Judge).
	Profile string
	Fit     *sim.Fit
	// Duration is the plan's length (model time on the simulator).
	Duration time.Duration
	// Seed is the first repeat's seed; repeat k uses Seed+k.
	Seed int64
	// Deterministic is true on the embedded simulator: the rows are a
	// function of the flags and the seed alone.
	Deterministic bool
	// Arrival says how the requests arrived (Arrival.Describe).
	Arrival string
	// Coordinated is a coordinated lab's sweep (Lab.Coordinate): on the
	// wall clock, clients apart, policies alone and coordinated.
	Coordinated bool
	// SLO is the latency within which a success counts in the measure;
	// Warmup and Tail the arrivals before and after the window
	// (Duration) measured, Plan all of a run's arrivals.
	SLO, Warmup, Tail, Plan time.Duration
	// MaxAttempts is the lab's cap; sdkMaxAttempts the SDKs' cap the fair
	// policies also ran under, 0 when they did not (a lab whose cap is
	// the SDKs', a named target, a coordinated lab).
	MaxAttempts, SDKMaxAttempts int
	// Reused counts the runs under the SDKs' cap that were their twin
	// under the lab's (no request of it went past the SDKs' cap), not run
	// again.
	Reused int
	// Runs is the number of runs the lab planned, Completed how many
	// finished.
	Runs, Completed int
	// Unfinished are the cells whose runs did not all finish, and so have
	// no Row: an interrupted lab's (Partial).
	Unfinished []unfinishedCell
	// Conditions are the grid's conditions (grid.go), givenCondition
	// first, those run in order; empty without a grid. Grid holds the
	// rows measured at the others, GridMode says which policies ran there,
	// GridSkipped the conditions left out and why.
	Conditions  []string
	Grid        []gridRow
	GridMode    string
	GridSkipped []string
}

// unfinishedCell is one policy at one load with one fleet size: a Row once every
// repeat of it finished.
type unfinishedCell struct {
	Policy  string
	Load    string
	Clients int
	// SDKCap: a fair policy's cell under the SDKs' cap.
	SDKCap bool
}
