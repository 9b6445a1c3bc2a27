// Package schedule plans scheduled-shaped traffic: open-loop arrivals at a
// planned rate, in phases that hold a rate or ramp it linearly. Arrival
// times come from inverting the cumulative rate Λ(t) = ∫ r, so arrival k
// of a constant plan is exactly at Λ⁻¹(k) and the count over a plan is
// exact (⌈Λ(end)⌉), not the product of a rounded interval. Poisson arrivals
// are unit-rate exponential steps in Λ-space mapped through the same
// inverse: a non-homogeneous Poisson process with the planned rate.
//
// schedule imports nothing from ptuprobe; Plan satisfies dispatch.Pacer
// structurally.
package schedule
