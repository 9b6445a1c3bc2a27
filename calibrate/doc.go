// Package calibrate finds the highest constant arrival rate a target
// admits without 429s: constant-rate probes over a geometric grid, stopping
// at the first rate that is not admitted, then geometric-midpoint bisection.
//
// A probe counts as admitted only when it drew no 429 and the target
// answered 2xx, over the probe's last part, at AdmitShare of the offered
// rate or more: a target that is merely slow is not taken for capacity.
//
// calibrate is an orchestrator beside cmd: it plans probes with schedule,
// sends them through dispatch and judges their Records. It does not build
// requests (target) or publish reports (analyze, report).
package calibrate
