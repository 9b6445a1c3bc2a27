// Package capacity finds the capacity a deployment sustains: the highest
// offered load at which goodput under an SLO stays at or above a target
// share and the share of requests refused with a 429 within a bound.
//
// Search runs steps of constant offered load, each a fresh measure of
// StepDuration of which the last JudgedShare is judged (the start of a
// step rides on whatever headroom the target had banked): a rising ramp
// from MinRate, each step Factor times the last, until a step fails (the
// bracket), then Depth bisections at geometric midpoints, then Repeats
// runs of each rate of the boundary (the last that passed and the first
// that failed), each with its own seed. Each repeat's pair gives the
// rate where the margin crosses zero, interpolated linearly between the
// two rates; the capacity is the median of those crossings and its
// interval their least and greatest.
//
// A step stops early once it is clearly past the capacity (Tally.Add):
// when more of its judged requests have missed than the target allows
// (or more were refused than the bound allows), it fails whatever the
// rest would do (exact: no later answer can save it); and when the time
// to first token rises through the judged part — in windows of an eighth
// of it, three consecutive windows' medians each above the last and the
// latest at least 1.25 times the first window's and a second more — the
// queue is growing: the load is past what the deployment serves (the
// idea of guidellm's over-saturation stop, a TTFT trend, as a rule on
// medians that a flat but noisy TTFT does not trip). The unsent requests
// of a stopped step count against its goodput.
//
// The steps are measured by a Measure: InProcess runs each in process on
// the virtual clock against the embedded simulator (internal/vrun;
// deterministic, seconds); against a named target, each runs on the wall
// clock through dispatch, on the target campaign opens (Job and Run: what
// a command runs). capacity.json, the chart and the table are written
// here (Result.WriteDir, Result.WriteTable).
package capacity
