package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/pflag"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/admission/redisstate"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/internal/campaign"
	"github.com/ptuprobe/ptuprobe/internal/policy"
	"github.com/ptuprobe/ptuprobe/internal/policylab"
)

// ownerFlags are --policy and --coordinate, beside the retry flags of
// burst, schedule and characterize.
type ownerFlags struct {
	policy      string
	coordinate  string
	passwordEnv string
	timeout     time.Duration
}

// DefaultCoordinatePasswordEnv is --coordinate-password-env's default.
const DefaultCoordinatePasswordEnv = "REDIS_PASSWORD"

func (f *ownerFlags) add(fs *pflag.FlagSet) {
	fs.StringVar(&f.policy, "policy", "", "retry owner: a `NAME` of ptuprobe policies (honor, slots, pace, cooldown, honor-backoff… or NAME=BASE,key=value,…), with its jitter, advice and backoff, under --max-attempts (default 3 with --policy) and --retry-budget")
	fs.StringVar(&f.coordinate, "coordinate", "", "share the retry owner's cooldown, slots and pace with every process naming the same target through the Redis at `URL`: redis://HOST:PORT/DB or rediss:// (without --policy, the shared cooldown is turned on); a Redis that fails leaves each decision to this process's own state")
	fs.StringVar(&f.passwordEnv, "coordinate-password-env", DefaultCoordinatePasswordEnv, coordinatePasswordEnvUsage)
	f.addTimeout(fs)
}

// addTimeout registers --coordinate-timeout.
func (f *ownerFlags) addTimeout(fs *pflag.FlagSet) {
	fs.DurationVar(&f.timeout, "coordinate-timeout", redisstate.DefaultCallTimeout, "deadline of each call to the --coordinate Redis (at most 10s): a slower answer is a fault, and that decision uses this process's own state; a Redis farther away needs more")
}

// policyOwner is the owner --policy names, under the fair caps of
// --max-attempts (3 when not given) and --retry-budget; it sets the
// target's fallback and emulation fields the policy needs.
func (f *runFlags) policyOwner(fs *pflag.FlagSet, target *campaign.Target) (*admission.Policy, error) {
	spec, err := policy.Parse(f.own.policy)
	if err != nil {
		return nil, usageError("--policy: %v", err)
	}
	attempts := admission.DefaultMaxAttempts
	if fs != nil && fs.Changed("max-attempts") {
		attempts = f.maxAttempts
	}
	if spec.Fallback && !target.Embedded() {
		return nil, usageError("--policy %s redirects to a fallback deployment, which these commands have only on the embedded simulator (ptuprobe policies --fallback-deployment names one on an endpoint)", spec.Name)
	}
	spec = spec.Fair(f.retryBudget, attempts)
	p, err := spec.Build(policy.Env{}) // its own Slots; the coordinator is --coordinate's
	if err != nil {
		return nil, err
	}
	target.Own(spec, p)
	return p, nil
}

// coordinator opens --coordinate for owner p and target spec: a bad URL
// or a refused password is a usage error, before any traffic; a Redis
// that does not answer is warned of once (each decision then falls back).
func (f *ownerFlags) coordinator(ctx context.Context, p *admission.Policy, spec client.Spec, stderr io.Writer) (*redisstate.Coordinator, error) {
	if f.coordinate == "" {
		return nil, nil
	}
	if p == nil {
		return nil, usageError("--coordinate shares a retry owner's state: give --max-attempts above 1 or --policy")
	}
	if !p.SharedCooldown && p.Slots == nil && p.Pace == nil {
		if f.policy != "" {
			return nil, usageError("--coordinate: policy %s has no shared cooldown, slots or pace to share", f.policy)
		}
		p.SharedCooldown = true
	}
	warn := func(err error) {
		fmt.Fprintf(stderr, "ptuprobe: warning: --coordinate: Redis failed (%v); each decision uses this process's own state until it answers again\n", err)
	}
	// A Redis that does not answer now is warned of at the first
	// decision, once.
	c, _, err := f.open(ctx, deploymentName(spec), warn)
	if err != nil {
		return nil, err
	}
	p.Coordinator = c
	return c, nil
}

// open opens --coordinate on the state named deployment and checks it: a
// bad URL, a refused password or a server that cannot keep the state as
// the URL names it is a usage error naming the flag, before any traffic;
// unanswered is why a Redis that did not answer the check did not (nil
// when it did).
func (f *ownerFlags) open(ctx context.Context, deployment string, warn func(error)) (c *redisstate.Coordinator, unanswered, err error) {
	switch {
	case f.passwordEnv == "":
		return nil, nil, usageError("--coordinate-password-env must name an environment variable")
	case f.timeout <= 0 || f.timeout > redisstate.MaxCallTimeout:
		return nil, nil, usageError("--coordinate-timeout must be positive and at most %v", redisstate.MaxCallTimeout)
	}
	c, err = redisstate.Open(f.coordinate, os.Getenv(f.passwordEnv), f.options(deployment, warn))
	if err != nil {
		return nil, nil, usageError("--coordinate: %v", err)
	}
	// The check's steps (dial, TLS, handshake, database, PING, a probe)
	// each end by the call's deadline.
	check, cancel := context.WithTimeout(ctx, time.Second+6*f.timeout)
	defer cancel()
	switch err := c.Check(check); {
	case errors.Is(err, redisstate.ErrAuth):
		c.Close()
		return nil, nil, usageError("--coordinate: %v (the password is read from $%s)", err, f.passwordEnv)
	case errors.Is(err, redisstate.ErrUnusable):
		c.Close()
		return nil, nil, usageError("--coordinate: %v", err)
	case err != nil:
		return c, err, nil
	}
	return c, nil, nil
}

// options are the Coordinator's options for the state named deployment.
func (f *ownerFlags) options(deployment string, warn func(error)) redisstate.Options {
	return redisstate.Options{Deployment: deployment, Warn: warn, CallTimeout: f.timeout}
}

// coordinatePasswordEnvUsage is --coordinate-password-env's help.
const coordinatePasswordEnvUsage = "name of the environment variable holding the --coordinate Redis password (never a flag value)"

// labCoordination is --coordinate for the policy lab: every client of a
// coordinated run opens its own Coordinator on the run's namespace, as
// the processes of a fleet would. A bad URL or a refused password is a
// usage error and a Redis that does not answer an error, both before any
// traffic (a coordinated run on the fallback alone would measure
// nothing); a Redis lost mid-lab is warned of once, and the func returned
// counts the decisions that fell back (redisstate.Pool).
func (f *ownerFlags) labCoordination(ctx context.Context, stderr io.Writer) (*policylab.Coordination, func() int64, error) {
	probe, unanswered, err := f.open(ctx, "ptuprobe policies: the check", nil)
	if err != nil {
		return nil, nil, err
	}
	probe.Close()
	if unanswered != nil {
		return nil, nil, fmt.Errorf("--coordinate: the Redis does not answer (%v): the coordinated runs would measure only each client's own state", unanswered)
	}
	var warned sync.Once
	warn := func(err error) {
		warned.Do(func() {
			fmt.Fprintf(stderr, "ptuprobe: warning: --coordinate: Redis failed (%v); each decision uses its client's own state until it answers again\n", err)
		})
	}
	pool := redisstate.NewPool(f.coordinate, os.Getenv(f.passwordEnv), f.options("", warn))
	open := func(namespace string) (policylab.Shared, error) {
		c, err := pool.Open(namespace)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	return &policylab.Coordination{Open: open}, pool.Fallbacks, nil
}

// deploymentName is what the fleet shares: the target as the flags name
// it (only its hash reaches Redis).
func deploymentName(s client.Spec) string {
	return strings.Join([]string{s.API, s.Endpoint, s.Deployment, s.URL, s.Model}, "\x00")
}

// closeCoordinator reports the run's fallbacks and closes c.
func closeCoordinator(c *redisstate.Coordinator, stderr io.Writer) {
	if c == nil {
		return
	}
	if n := c.Fallbacks(); n > 0 {
		fmt.Fprintf(stderr, "note: --coordinate: %d decisions fell back to this process's own state\n", n)
	}
	c.Close()
}

// coordinated counts c's fallbacks on the metrics endpoint, if any.
func (m *metricsFlags) coordinated(c *redisstate.Coordinator) error {
	if m.ep == nil || c == nil {
		return nil
	}
	return m.ep.Register(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "ptuprobe_coordinate_fallbacks_total",
		Help: "Decisions of the retry owner taken on this process's own state because the --coordinate Redis failed (or was not called within a second of a failure).",
	}, func() float64 { return float64(c.Fallbacks()) }))
}
