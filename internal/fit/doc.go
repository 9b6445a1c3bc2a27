// Package fit is `ptuprobe fit`: it fits the embedded simulator's limiter
// to a recorded run, so that "what should my client do?" can be asked of a
// twin of the user's own deployment. It replays the run's recorded sends
// (each attempt when the deployment decided it, with its prompt, output
// cap and, admitted, its recorded completion) through a fresh simulator
// per candidate setting, on a virtual clock in process (internal/vrun),
// and minimizes the
// distance between the recorded outcomes and the replayed ones: which
// sends were refused, and per source group the advised waits (two-sample
// KS) and the 429 count. Or it fits the main job's plan to published
// waits (fromPlan). The settings it moves are the rows of paramRows, a table
// the optimizer is generic over; it tries each limiter model (ptu, gateway,
// window) and keeps the best, then weighs what a refusal costs. The
// result is a sim.Profile whose Fit says good, poor or insufficient, and
// why. docs/fit.md has the method.
//
// It runs the simulator and reads results; it sends nothing to any
// network, and imports neither client nor dispatch.
package fit
