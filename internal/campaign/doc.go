// Package campaign is a traffic job from its settings to its rows:
// validate everything, open the target (or start the embedded
// simulator) and the results file, then run the plans in order under one
// run id and one time budget, on one timeline from a fleet's common
// start; a calibration likewise. Each Plan describes itself and what it
// needs (Plan.Description, Planned, Span); Abort stops a run whose
// failures other than admission pass a share, as k6's abortOnFail does.
//
// # Fleet runs: one plan, many workers
//
// `--shard I/N` and `--start-at` on `burst`, `schedule` and `characterize`
// (not `calibrate`: its probes adapt to the answers, so workers would not
// compute one plan; not `policies`, whose `--clients` simulates the fleet) become `campaign.Options.Shard` and `Start`.
// `campaign` validates them with the job: a start more than
// `StartTolerance` (1 s) past or `MaxStartAhead` (24 h) ahead, several shards
// without a start, or a wave that waits for answers (`WaitWave`) with either,
// is a `*valid.Error`; `--shard /N` takes I from `JOB_COMPLETION_INDEX` (a
// Kubernetes Indexed Job), read in `cmd`. With a start the plans are on one
// timeline every worker computes alike: plan k starts at Start + the `Slot`s
// of the plans before it (a burst's span plus one gap, a schedule's
// duration), not when the previous plan's last answer came (a plan still
// being answered then makes the next one's first sends late, recorded as
// such), and `Budget` counts from Start, so every worker caps the same
// arrivals. `--max-requests` bounds the plan (`Job.Planned`), the same on
// every worker. `analyze --group-by worker`
// (`analyze.GroupByWorker`) publishes one group per worker; the default
// grouping over all the workers' files is the fleet's table.
package campaign
