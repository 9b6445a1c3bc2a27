package policylab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/num"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/schedule"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Bounds of a lab's settings.
const (
	MaxClients     = 1024
	maxRepeat      = 20
	maxLabDuration = time.Hour
)

// minLabDuration is the shortest Duration a lab takes: a second, unless
// a test lowered it (SetMinDurationForTests).
var minLabDuration = time.Second

// SetMinDurationForTests lets every lab validated after it run phases as
// short as d (a user's are a second at least): for the tests of a
// package that runs labs on the wall clock to check what they write, not
// what a second of traffic shows (cmd's: a lab against a named target
// waited out a second a policy). Call it from TestMain, before any lab.
func SetMinDurationForTests(d time.Duration) { minLabDuration = d }

// Validate checks every setting of the lab before anything runs; each
// error is a *valid.Error naming the Lab field.
func (l *Lab) Validate() error {
	switch {
	case len(l.Policies) == 0:
		return valid.Errorf("Policies", "name at least one policy")
	case len(l.Policies) > policy.MaxPolicies:
		return valid.Errorf("Policies", "at most %d policies in one lab (%d given)", policy.MaxPolicies, len(l.Policies))
	case len(l.Loads) == 0:
		return valid.Errorf("Loads", "name at least one load")
	case len(l.Clients) == 0 || len(l.Clients) > 8:
		return valid.Errorf("Clients", "want 1 to 8 fleet sizes")
	case l.Repeat < 1 || l.Repeat > maxRepeat:
		return valid.Errorf("Repeat", "must be from 1 to %d", maxRepeat)
	case l.Budget <= 0 || l.Budget > time.Hour:
		return valid.Errorf("Budget", "must be positive and at most 1h")
	case l.MaxAttempts < 1 || l.MaxAttempts > policy.MaxAttempts:
		return valid.Errorf("MaxAttempts", "must be from 1 to %d", policy.MaxAttempts)
	case l.Duration < minLabDuration || l.Duration > maxLabDuration:
		return valid.Errorf("Duration", "must be from %v to %v", minLabDuration, maxLabDuration)
	case l.Warmup < 0 || l.Warmup > maxLabDuration:
		return valid.Errorf("Warmup", "must be from 0 to %v (the {Budget} is recommended)", maxLabDuration)
	case l.Tail < 0 || l.Tail > maxLabDuration:
		return valid.Errorf("Tail", "must be from 0 to %v (the {Budget} is recommended)", maxLabDuration)
	case l.StoreDelay < 0 || l.StoreDelay > time.Second:
		return valid.Errorf("StoreDelay", "must be from 0 to 1s (%v is recommended)", DefaultStoreDelay)
	case l.SLO <= 0 || l.SLO > time.Hour:
		return valid.Errorf("SLO", "must be positive and at most 1h (%v is recommended)", DefaultSLO)
	case l.PromptTokens < 1 || l.PromptTokens > 1_000_000:
		return valid.Errorf("PromptTokens", "must be from 1 to 1000000")
	case l.MaxTokens < 1 || l.MaxTokens > 16_384:
		return valid.Errorf("MaxTokens", "must be from 1 to 16384")
	}
	for _, z := range l.sizes {
		if z.Prompt < 1 || z.Prompt > 1_000_000 || z.MaxTokens < 1 || z.MaxTokens > 16_384 {
			return valid.Errorf("Sizes", "a request of %d prompt tokens and max_tokens %d: want 1 to 1000000 and 1 to 16384", z.Prompt, z.MaxTokens)
		}
	}
	seen := map[string]bool{}
	for _, s := range l.Policies {
		if seen[s.Name] {
			return valid.Errorf("Policies", "%s is named twice", s.Name)
		}
		seen[s.Name] = true
	}
	fleets := map[int]bool{}
	for _, n := range l.Clients {
		if n < 1 || n > MaxClients {
			return valid.Errorf("Clients", "each fleet size must be from 1 to %d", MaxClients)
		}
		if fleets[n] {
			return valid.Errorf("Clients", "%d is given twice", n)
		}
		fleets[n] = true
	}
	if l.Coordinate != nil && l.CoordinatedPolicies() == 0 {
		return valid.Errorf("Coordinate", "shares a retry owner's cooldown, slots or pace, which none of the policies has: name slots, pace, cooldown or a custom spec with slots, pace or cooldown on")
	}
	if l.Named != nil {
		return l.validateNamed()
	}
	if l.Sim.Dialect != sim.DialectAzure && l.Sim.Dialect != sim.DialectIETF {
		return valid.Errorf("Dialect", "the lab sends the Azure route: want azure or ietf, not %s", l.Sim.Dialect)
	}
	if err := l.Sim.Validate(); err != nil {
		return err
	}
	capacity, _ := l.Sim.Capacity(l.PromptTokens, l.MaxTokens, slices.Min(l.Clients))
	if err := l.checkArrival(capacity); err != nil {
		return err
	}
	for _, ld := range l.Loads {
		if n := ld.rate(capacity) * l.plan().Seconds(); n > maxArrivals {
			return valid.Errorf("Loads", "%s for {Duration} %v is %.0f arrivals a run, over %d: shorten the plan or lower the load", ld.Text, l.Duration, n, maxArrivals)
		}
	}
	if l.Runs() > maxRuns {
		return valid.Errorf("Repeat", "the lab would make %d runs, over %d: fewer policies, loads, fleet sizes or repeats", l.Runs(), maxRuns)
	}
	return l.validateWork()
}

// checkArrival refuses an arrival process the lab cannot play at its
// loads (capacity is what their multiples are of).
func (l *Lab) checkArrival(capacity float64) error {
	a := l.Arrival
	switch a.Kind {
	case "", arrivalPoisson, arrivalConstant, arrivalWaves:
	case arrivalGamma:
		if !(a.CV >= schedule.MinCV && a.CV <= schedule.MaxCV) {
			return valid.Errorf("Arrival", "gamma's coefficient of variation %g: want %g to %g", a.CV, schedule.MinCV, float64(schedule.MaxCV))
		}
	case arrivalReplay:
		if len(a.Replay) < 2 || a.Span <= 0 {
			return valid.Errorf("Arrival", "a replay needs at least two recorded arrivals over some time")
		}
	default:
		return valid.Errorf("Arrival", "%q: want %s, %s, %s:CV, %s or %s", clip(a.Kind), arrivalPoisson, arrivalConstant, arrivalGamma, arrivalWaves, arrivalReplay)
	}
	for _, ld := range l.Loads {
		if err := a.check(ld.Text, ld.rate(capacity)); err != nil {
			return valid.Errorf("Arrival", "%v", err)
		}
	}
	return nil
}

// validateWork refuses a lab on the simulator whose Work passes MaxWork,
// before it runs: saying the estimate, so the cap is raised knowingly.
func (l *Lab) validateWork() error {
	if l.MaxWork < 1 {
		return valid.Errorf("MaxWork", "must be at least 1")
	}
	if w := l.Work(); w > l.MaxWork {
		return valid.Errorf("MaxWork", "the lab would send the simulator up to %s attempts (every arrival at its policy's attempts cap), over %s: "+
			"raise it deliberately (about 20 µs of a core each), or fewer policies, loads, fleet sizes, repeats or {MaxAttempts}, a lower load or a shorter {Duration}",
			num.Grouped(float64(w), 0), num.Grouped(float64(l.MaxWork), 0))
	}
	return nil
}

// validateNamed checks what a lab against a named target needs: a
// capacity for multiples, a plan within MaxRequests, a target that
// resolves (its key variable set, a fallback for the policies that
// redirect), a pause in range.
func (l *Lab) validateNamed() error {
	n := l.Named
	switch {
	case !(n.Capacity >= 0) || n.Capacity > 100_000:
		return valid.Errorf("Capacity", "must be a rate from 0 (unknown) to 100000 requests/s")
	case n.Pause < 0 || n.Pause > time.Hour:
		return valid.Errorf("Pause", "must be from 0 to 1h")
	case n.MaxRequests < 1:
		return valid.Errorf("MaxRequests", "must be at least 1")
	}
	for _, ld := range l.Loads {
		if ld.X > 0 && n.Capacity == 0 {
			return valid.Errorf("Loads", "%s is a multiple of capacity, which is unknown for a named target: give {Capacity} (from calibrate), or plain rates such as 8/s", ld.Text)
		}
	}
	if err := l.checkArrival(n.Capacity); err != nil {
		return err
	}
	if p := l.Planned(n.Capacity); p > n.MaxRequests {
		return valid.Errorf("MaxRequests", "the lab would offer the target %d requests, over %d: raise it deliberately, or fewer policies, loads, repeats or a shorter {Duration}", p, n.MaxRequests)
	}
	for _, s := range l.Policies {
		t := n.Target
		owner, err := s.Fair(l.Budget, l.MaxAttempts).Build(policy.Env{})
		if err != nil {
			return err
		}
		t.Owner, t.PolicyName, t.Fallback = owner, s.Name, s.Fallback
		if s.Fallback && t.FallbackDeployment == "" {
			return valid.Errorf("FallbackDeployment", "is needed by policy %s, which redirects: name the Azure deployment a redirect goes to", s.Name)
		}
		if err := t.Validate(); err != nil {
			return err
		}
	}
	return nil
}

// maxArrivals bounds the arrivals of one run, so a lab's traffic — in
// process, on a virtual clock, but memory and CPU still — stays bounded.
const maxArrivals = 200_000

// Job is `ptuprobe policies`: the lab, and where its outputs go.
type Job struct {
	Lab    Lab
	OutDir string
	Setup  Setup
}

// Execute validates the job, runs the lab and publishes what it measured
// into OutDir: on an interrupt too, with the rows completed by then (and
// then returns ErrInterrupted). It returns the Sweep and the paths written.
func Execute(ctx context.Context, j Job) (Sweep, []string, error) {
	if err := j.Lab.Validate(); err != nil {
		return Sweep{}, nil, err
	}
	if j.OutDir == "" {
		return Sweep{}, nil, valid.Errorf("OutDir", "must name a directory")
	}
	if err := os.MkdirAll(j.OutDir, 0o755); err != nil {
		return Sweep{}, nil, fmt.Errorf("create the output directory: %w", err)
	}
	sw, runErr := runLab(ctx, j.Lab)
	if runErr != nil && !errors.Is(runErr, ErrInterrupted) {
		return sw, nil, runErr
	}
	written, err := publish(j.OutDir, sw, j.Setup)
	if err != nil {
		return sw, written, err
	}
	return sw, written, runErr
}
