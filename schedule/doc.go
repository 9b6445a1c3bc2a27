// Package schedule plans scheduled-shaped traffic: open-loop arrivals at a
// planned rate, in phases that hold a rate or ramp it linearly. Arrival
// times come from inverting the cumulative rate Λ(t) = ∫ r, so arrival k
// of a constant plan is exactly at Λ⁻¹(k) and the count over a plan is
// exact (⌈Λ(end)⌉), not the product of a rounded interval. Poisson arrivals
// are unit-rate exponential steps in Λ-space mapped through the same
// inverse: a non-homogeneous Poisson process with the planned rate.
// Gamma arrivals (ArrivalGamma, --arrival gamma:CV, vLLM's --burstiness)
// are unit-mean gamma steps of shape 1/CV² in the same Λ-space: a
// renewal process of the planned rate whose gaps have the coefficient of
// variation CV (1 is Poisson, above burstier).
//
// Steady is one process at one rate for a plan's length (the policy
// lab's loads); Replay is a trace's offsets as a plan (internal/trace
// reads them; rows at one instant are consecutive arrivals at one
// offset), RepeatAt a trace at a rate. The lab, fit and traffic plan
// with these alike.
//
// schedule imports nothing from ptuprobe but internal/valid; Plan and
// Replay satisfy dispatch.Pacer structurally.
//
// # Schedules
//
// `schedule` inverts the cumulative rate Λ(t): arrival *k* of a constant or
// ramped plan is at Λ⁻¹(k), so counts are exact (30/s for 60 s is 1800) and a
// ramp's arrivals follow the rate linearly. Poisson arrivals step by Exp(1)
// in Λ-space through the same inverse (a non-homogeneous Poisson process),
// seeded; gamma arrivals (`--arrival gamma:CV`, vLLM's `--burstiness`) by
// gamma steps of mean 1 and coefficient of variation CV (shape 1/CV²,
// Marsaglia–Tsang), the same seed. `Replay` is a trace's sorted offsets
// (`internal/trace`), cut by `--duration`; rows at one instant are
// consecutive arrivals at one offset (wave −1, as every scheduled arrival),
// arrival *i* the trace's row *i*. The lab's loads use `Steady` (one
// process at one rate; its constant counts ⌊rate × plan⌋ whole requests,
// its Poisson keeps the lab's seeded stream) and `RepeatAt` (a trace at a
// load's rate).
package schedule
