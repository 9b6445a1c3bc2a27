package redisstate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// The defaults of Options' zero fields.
const (
	// DefaultCallTimeout bounds one call to Redis: 50 ms. A slower Redis
	// is a fault, and the decision falls back to the process's own state.
	DefaultCallTimeout = 50 * time.Millisecond
	// DefaultRetry is how long after a failed call Redis is not called.
	DefaultRetry = time.Second
	// DefaultPaceTTL is how long a pace's state outlives its last step.
	DefaultPaceTTL = 10 * time.Minute
)

// Options tune a Coordinator. Deployment is required; a zero duration
// takes its default; a CallTimeout out of range is an error naming it
// (errors.As against interface{ Field() string }).
type Options struct {
	// Deployment names the deployment the fleet shares (for ptuprobe, its
	// endpoint and deployment together): only its hash is in Redis.
	Deployment string
	// CallTimeout bounds each call (DefaultCallTimeout when zero; at most
	// MaxCallTimeout): a Redis farther away than it needs a larger one.
	CallTimeout time.Duration
	// Retry is how long after a failed call every decision uses the
	// process's own state without calling Redis (DefaultRetry).
	Retry time.Duration
	// PaceTTL is how long a pace's state outlives its last step
	// (DefaultPaceTTL).
	PaceTTL time.Duration
	// Warn, when set, is called once per outage with the error that
	// began it (no password: go-redis' errors name the address at most).
	Warn func(error)
	// Now is the clock of Retry; nil means time.Now.
	Now func() time.Time
}

// Coordinator is an admission.Coordinator on Redis. It is safe for
// concurrent use.
type Coordinator struct {
	client redis.UniversalClient
	o      Options
	keys   [3]string // cooldown, slots, pace

	url *urlFacts // Open's; nil for New's

	fallbacks atomic.Int64
	mu        sync.Mutex
	skipUntil time.Time // no call before: the last failure plus Retry
	lost      bool      // in an outage: Warn was called
}

var _ admission.Coordinator = (*Coordinator)(nil)

// New returns a Coordinator on client (go-redis' *redis.Client, or a
// cluster client). Give the client no retries (MaxRetries -1) and
// ContextTimeoutEnabled, as Open does, so that a call ends at its
// deadline.
func New(client redis.UniversalClient, o Options) (*Coordinator, error) {
	if o.Deployment == "" {
		return nil, errors.New("redisstate: no deployment to name the state by")
	}
	var err error
	if o.CallTimeout, err = callTimeout(o.CallTimeout); err != nil {
		return nil, err
	}
	if o.Retry <= 0 {
		o.Retry = DefaultRetry
	}
	if o.PaceTTL <= 0 {
		o.PaceTTL = DefaultPaceTTL
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Coordinator{client: client, o: o}
	prefix := keyPrefix(o.Deployment)
	c.keys = [3]string{prefix + "cooldown", prefix + "slots", prefix + "pace"}
	return c, nil
}

// keyPrefix is the prefix of a deployment's keys: ptuprobe:{HASH}: where
// HASH is the first 128 bits of the SHA-256 of its name, in hex.
func keyPrefix(deployment string) string {
	sum := sha256.Sum256([]byte(deployment))
	return "ptuprobe:{" + hex.EncodeToString(sum[:16]) + "}:"
}

// ErrURL is the error of a URL that Open cannot use (wrapped with why).
var ErrURL = errors.New("not a Redis URL")

// Open returns a Coordinator on the Redis at rawURL, redis://HOST:PORT/DB
// or rediss:// (TLS), with password (empty: none; never in the URL, which
// is refused when it holds one): a client without retries whose dials,
// TLS handshakes, reads and writes are bounded by the call's deadline,
// and whose connections refuse a reply larger than the scripts answer
// (ErrReply). It sends nothing: Check does. The first Open silences
// go-redis' own logger, process-wide.
func Open(rawURL, password string, o Options) (*Coordinator, error) {
	if !strings.HasPrefix(rawURL, "redis://") && !strings.HasPrefix(rawURL, "rediss://") {
		return nil, fmt.Errorf("%w: the scheme must be redis:// or rediss://", ErrURL)
	}
	opts, err := redis.ParseURL(rawURL)
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // without the URL, which may hold a password
	}
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %s", ErrURL, strings.TrimPrefix(err.Error(), "redis: "))
	case opts.Password != "":
		return nil, fmt.Errorf("%w: it holds a password; give it in the environment instead", ErrURL)
	case opts.DB < 0:
		// go-redis selects no database for a negative number: DB 0.
		return nil, fmt.Errorf("%w: the database number must be 0 or more", ErrURL)
	}
	timeout, err := callTimeout(o.CallTimeout)
	if err != nil {
		return nil, err
	}
	opts.Password = password
	opts.MaxRetries = -1
	opts.ContextTimeoutEnabled = true
	opts.DialTimeout, opts.ReadTimeout, opts.WriteTimeout, opts.PoolTimeout = timeout, timeout, timeout, timeout
	opts.Dialer = dialer(opts.TLSConfig, timeout)
	opts.DisableIdentity = true
	opts.DialerRetries = 1
	opts.PoolSize = max(opts.PoolSize, poolSize)
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	c, err := New(redis.NewClient(opts), o)
	if err != nil {
		return nil, err
	}
	c.url = &urlFacts{addr: opts.Addr, tls: opts.TLSConfig != nil, userOnly: opts.Username != "" && password == "", password: password}
	return c, nil
}

// urlFacts is what Check's diagnosis and the messages need of Open's URL
// and password.
type urlFacts struct {
	addr     string
	tls      bool
	userOnly bool   // a user name and no password: perhaps a password before the @
	password string // to keep it out of every message
}

// MaxCallTimeout bounds Options.CallTimeout: a call runs on a request's
// time, and an outage costs one call's deadline per Options.Retry.
const MaxCallTimeout = 10 * time.Second

// callTimeout is Options.CallTimeout with its default, or an error naming
// it when out of range.
func callTimeout(d time.Duration) (time.Duration, error) {
	switch {
	case d == 0:
		return DefaultCallTimeout, nil
	case d < 0 || d > MaxCallTimeout:
		return 0, valid.Errorf("CallTimeout", "must be positive and at most %v", MaxCallTimeout)
	}
	return d, nil
}

// quietOnce silences go-redis' own logger, which writes to stderr on
// every failed dial: Options.Warn says it once. It is a process-wide
// setting of go-redis, made by the first Open.
var quietOnce sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// poolSize is the least number of connections Open's client keeps:
// decisions of a burst refused together go at once, each within its 50
// ms, and one that waits for a connection past it falls back.
const poolSize = 64

// Close closes the client.
func (c *Coordinator) Close() error { return c.client.Close() }

// Fallbacks is the number of decisions taken on the process's own state
// because Redis failed, or was not called after a failure.
func (c *Coordinator) Fallbacks() int64 { return c.fallbacks.Load() }

// errSkipped is the error of a call not made within Retry of a failure.
var errSkipped = errors.New("redisstate: Redis failed less than Options.Retry ago; not called")

// call runs one script within the call's deadline and reads its answer
// with read; a failure of either is a fault of the store, counted and
// reported (Options.Warn once per outage, no call for Options.Retry).
func (c *Coordinator) call(ctx context.Context, s *redis.Script, key string, read func(any) error, args ...any) error {
	c.mu.Lock()
	skip := c.lost && c.o.Now().Before(c.skipUntil)
	c.mu.Unlock()
	if skip {
		c.fallbacks.Add(1)
		return errSkipped
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.CallTimeout)
	defer cancel()
	v, err := s.Run(ctx, c.client, []string{key}, args...).Result()
	if errors.Is(err, redis.ErrPoolTimeout) {
		// Every connection is busy with other decisions: Redis answers,
		// this one falls back, and it is no outage.
		c.fallbacks.Add(1)
		return err
	}
	if err == nil {
		err = read(v)
	}
	c.mu.Lock()
	began := err != nil && !c.lost
	c.lost = err != nil
	if err != nil {
		c.skipUntil = c.o.Now().Add(c.o.Retry)
	}
	c.mu.Unlock()
	if err != nil {
		c.fallbacks.Add(1)
		if began && c.o.Warn != nil {
			c.o.Warn(c.safe(err))
		}
	}
	return err
}

// MaxAhead bounds how far ahead of the caller's time a time the store
// answers may be: a cooldown's end, a retry slot or a send slot later than
// this is no state of budgets and waits a caller honours (ptuprobe's are
// at most 24 h) but a store that is not keeping them, a fault, and the
// process's own state decides.
const MaxAhead = 24 * time.Hour

// ahead checks a time the store answered against MaxAhead after from.
func ahead(what string, t, from time.Time) error {
	if t.Sub(from) > MaxAhead {
		return fmt.Errorf("redisstate: the store answered a %s %v ahead, past %v", what, t.Sub(from).Round(time.Second), MaxAhead)
	}
	return nil
}

// Cooldown is admission.Coordinator's: one script.
func (c *Coordinator) Cooldown(ctx context.Context, until time.Time, source string) (end time.Time, src string, err error) {
	now := c.o.Now()
	err = c.call(ctx, cooldownScript, c.keys[0], func(v any) error {
		r, ok := v.([]any)
		if !ok || len(r) != 2 {
			return fmt.Errorf("redisstate: the cooldown script answered %T", v)
		}
		us, _ := r[0].(int64)
		end = fromMicros(us)
		src, _ = r[1].(string)
		return ahead("cooldown end", end, later(now, until))
	}, micros(until), source, micros(now))
	if err != nil {
		return time.Time{}, "", err
	}
	return end, src, nil
}

// Slot is admission.Coordinator's: one script.
func (c *Coordinator) Slot(ctx context.Context, at time.Time, width time.Duration) (slot time.Time, err error) {
	err = c.call(ctx, slotScript, c.keys[1], func(v any) error {
		us, ok := v.(int64)
		if !ok {
			return fmt.Errorf("redisstate: the slot script answered %T", v)
		}
		slot = fromMicros(us)
		return ahead("retry slot", slot, at)
	}, micros(at), width.Microseconds(), micros(c.o.Now()))
	if err != nil {
		return time.Time{}, err
	}
	return slot, nil
}

var paceOps = map[admission.PaceOp]string{
	admission.PaceReserve: "reserve", admission.PaceConfirm: "confirm",
	admission.PaceAdmitted: "admitted", admission.PaceRefused: "refused",
}

// Pace is admission.Coordinator's: one script.
func (c *Coordinator) Pace(ctx context.Context, s admission.PaceStep) (res admission.PaceResult, err error) {
	op, ok := paceOps[s.Op]
	if !ok {
		return admission.PaceResult{}, fmt.Errorf("redisstate: unknown pace step %d", s.Op)
	}
	wait := s.Wait.Microseconds()
	if s.Wait < 0 {
		wait = -1
	}
	err = c.call(ctx, paceScript, c.keys[2], func(v any) error {
		r, ok := v.([]any)
		if !ok || len(r) != 3 {
			return fmt.Errorf("redisstate: the pace script answered %T", v)
		}
		at, _ := r[0].(int64)
		gen, _ := r[1].(int64)
		okv, _ := r[2].(int64)
		res = admission.PaceResult{At: fromMicros(at), Gen: uint64(gen), OK: okv == 1}
		if s.Op != admission.PaceReserve {
			return nil // only a reserve's slot is waited for
		}
		return ahead("send slot", res.At, s.Now)
	}, op, micros(s.Now), micros(s.Sent), wait, micros(s.Deadline),
		s.Margin.Microseconds(), s.Gen, micros(s.At), s.Config.Decrease, s.Config.Increase, s.Config.MinRate,
		c.o.PaceTTL.Milliseconds())
	if err != nil {
		return admission.PaceResult{}, err
	}
	return res, nil
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// micros is t in microseconds since the Unix epoch; 0 for the zero time.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return time.UnixMicro(us)
}
