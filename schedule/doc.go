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
package schedule
