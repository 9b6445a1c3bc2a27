package campaign

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/admission"
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/memnet"
	"github.com/ptuprobe/ptuprobe/internal/tokenize"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
	"github.com/ptuprobe/ptuprobe/sim"
)

// Target is where requests go: the target the Spec names, or, when it
// names none (neither Endpoint nor URL), the embedded simulator started on
// loopback with Sim.
type Target struct {
	Spec client.Spec
	Sim  sim.Config
	// Getenv reads the key's environment variable; nil means os.Getenv.
	Getenv func(string) string
	// MaxConns sizes the connection pool (the run's in-flight bound).
	MaxConns int
	// OnSimulator, when set, is told the embedded simulator's URL once it
	// listens.
	OnSimulator func(url string)
	// InMemory serves the embedded simulator on an in-memory network
	// (internal/memnet) instead of a loopback socket, for tests under
	// testing/synctest, where a real socket would stop the fake clock.
	InMemory bool
	// OnSimulatorStats, when set, is given the embedded simulator's stats
	// (what it admitted, refused and witnessed) just before it stops.
	OnSimulatorStats func(sim.Stats)
	// OnSimulatorStart, when set, is given a function that reads the
	// embedded simulator's stats, once it listens (e.g. for live metrics);
	// it may be called at any time, also after the simulator stopped.
	OnSimulatorStart func(stats func() sim.Stats)

	// Owner, when set, is the client's retry owner (client.Config.Owner):
	// every attempt it makes is a row, labelled PolicyName.
	Owner      *admission.Policy
	PolicyName string
	// Fallback gives the owner a fallback target for its redirect step:
	// FallbackDeployment on the same Azure endpoint, or on the embedded
	// simulator its standard deployment (started for it).
	Fallback           bool
	FallbackDeployment string
	// AppAttempts, AppDelay and MarkSDKRetries emulate other clients
	// (client.Config).
	AppAttempts    int
	AppDelay       time.Duration
	MarkSDKRetries bool

	// Tokenizer names the vocabulary prompts are counted in (o200k_base
	// or cl100k_base); empty: the default for the model or deployment
	// name (tokenize.Default).
	Tokenizer string
	// Lengths draws each request's sizes; zero Dists: the Spec's.
	Lengths Lengths
	// Prompts names a prompts file (client.ReadPrompts), sent instead of
	// synthetic prompts in PromptsOrder ("" is PromptsInOrder), random by
	// Lengths.Seed.
	Prompts      string
	PromptsOrder string
	prompts      *client.Prompts // read once
}

// DefaultFallbackDeployment is the embedded simulator's standard
// deployment when a fallback is asked for.
const DefaultFallbackDeployment = "sim-standard"

// Embedded reports whether requests go to the embedded simulator.
func (t *Target) Embedded() bool { return t.Spec.Endpoint == "" && t.Spec.URL == "" }

// Validate resolves the target without side effects: nothing is started,
// read beyond a body file, or sent.
func (t *Target) Validate() error {
	if !t.Embedded() {
		c, err := t.named()
		if c != nil {
			c.Close()
		}
		return err
	}
	if t.Spec.API == client.APIRaw || t.Spec.Body != "" || t.Spec.Method != "" {
		return valid.Errorf("URL", "is needed by the raw API")
	}
	sc := t.simConfig()
	if err := sc.Validate(); err != nil {
		return err
	}
	if api := t.Spec.API; api != "" && simAPI[sc.Dialect] != api {
		return valid.Errorf("API", "is %s, but the embedded simulator is asked to speak %s: give one of them, or both alike", api, sc.Dialect)
	}
	if t.Fallback && simAPI[sc.Dialect] != client.APIAzure {
		return valid.Errorf("Fallback", "needs the simulator's azure or ietf dialect (a fallback deployment is an Azure route)")
	}
	c, err := t.simulated("http://127.0.0.1:1", t.Sim.Deployment, nil)
	if c != nil {
		c.Close()
	}
	return err
}

// Open builds the client, starting the embedded simulator first when the
// target is embedded; the func closes what was opened.
func (t *Target) Open(ctx context.Context) (dispatch.Sender, func(), error) {
	if !t.Embedded() {
		c, err := t.named()
		if err != nil {
			return nil, nil, err
		}
		return sender{c}, c.Close, nil
	}
	// The simulator outlives a cancel until the run has recorded its
	// in-flight requests; the returned func stops it.
	var srv *sim.Running
	var err error
	var dial func(ctx context.Context, network, addr string) (net.Conn, error)
	if t.InMemory {
		ln := memnet.Listen()
		dial = ln.DialContext
		srv, err = sim.Serve(context.WithoutCancel(ctx), t.simConfig(), ln)
	} else {
		srv, err = sim.Start(context.WithoutCancel(ctx), t.simConfig(), "127.0.0.1:0")
	}
	if err != nil {
		return nil, nil, fmt.Errorf("start the embedded simulator: %w", err)
	}
	if t.OnSimulator != nil {
		t.OnSimulator(srv.URL)
	}
	if t.OnSimulatorStart != nil {
		t.OnSimulatorStart(srv.Server.Stats)
	}
	c, err := t.simulated(srv.URL, srv.Deployment, dial)
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return sender{c}, func() {
		c.Close()
		if t.OnSimulatorStats != nil {
			t.OnSimulatorStats(srv.Server.Stats())
		}
		srv.Close()
	}, nil
}

// sender is a client.Target as the dispatch engine's Sender.
type sender struct{ t *client.Target }

func (s sender) Send(ctx context.Context, req dispatch.Request, record func(*results.Record)) {
	s.t.SendHead(ctx, &client.Head{Row: &req.Row, Seq: req.Seq, Wave: req.Wave, IntendedMS: req.IntendedMS, SentMS: req.SentMS}, req.Start, req.Run, record)
}

// shaped is the sender of a plan with sizes of its own (a replayed
// trace's): the same client, its connections shared.
func (s sender) shaped(shapes client.Shaper) (dispatch.Sender, error) {
	t, err := s.t.WithShapes(shapes)
	return sender{t}, err
}

// cut is the sender of the refill probe's requests: the job's, each
// with its prompt and max_tokens ÷ units (probeShapes); an error where
// the requests are not synthetic prompts (a raw body, a prompts file).
func (s sender) cut(units int) (dispatch.Sender, error) {
	if p, _ := s.t.Sizes(0); p == results.None {
		return nil, errors.New("campaign: a raw body cannot be cut")
	}
	return s.shaped(probeShapes{t: s.t, units: units})
}

func (t *Target) named() (*client.Target, error) {
	cfg, err := client.Resolve(t.Spec, t.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = t.MaxConns
	if err := t.configure(&cfg); err != nil {
		return nil, err
	}
	if t.Fallback && (cfg.API != client.APIAzure || t.FallbackDeployment == "") {
		return nil, valid.Errorf("FallbackDeployment", "is needed for a fallback: the Azure deployment a redirect goes to")
	}
	if err := t.own(&cfg, t.FallbackDeployment); err != nil {
		return nil, err
	}
	return client.New(cfg)
}

// simConfig is the embedded simulator's configuration: Sim, with a
// standard deployment that serves only what is sent to it when a fallback
// is asked for.
func (t *Target) simConfig() sim.Config {
	c := t.Sim
	if t.Fallback && c.SpilloverDeployment == "" {
		c.SpilloverDeployment, c.SpilloverPerRequest = DefaultFallbackDeployment, true
	}
	// The simulator speaks the API the user chose: --api anthropic with no
	// target is an Anthropic-dialect simulator (--sim-dialect says it
	// outright; the two must agree, which Validate checks).
	if d, ok := apiDialect[t.Spec.API]; ok && (c.Dialect == "" || c.Dialect == sim.DialectAzure) {
		c.Dialect = d
	}
	// It counts prompts as its client does (--sim-tokenizer says otherwise):
	// the vocabulary of the model or deployment named, as Azure counts them.
	if c.Tokens == nil {
		if tok, err := tokenize.Get(t.tokenizer()); err == nil {
			c.Tokens = tok
		}
	}
	return c
}

// simAPI is the client API that speaks each simulator dialect.
var simAPI = map[string]string{
	sim.DialectAzure: client.APIAzure, sim.DialectIETF: client.APIAzure,
	sim.DialectOpenAI: client.APIOpenAI, sim.DialectAnthropic: client.APIAnthropic, sim.DialectGemini: client.APIGemini,
}

// apiDialect is the simulator dialect each non-Azure client API speaks.
var apiDialect = map[string]string{
	client.APIOpenAI: sim.DialectOpenAI, client.APIAnthropic: sim.DialectAnthropic, client.APIGemini: sim.DialectGemini,
}

// own sets the retry owner on cfg, with a fallback to deployment.
func (t *Target) own(cfg *client.Config, deployment string) error {
	if t.Owner == nil {
		return nil
	}
	p := *t.Owner
	if t.Fallback {
		p.Fallback = toDeployment(cfg.Deployment, deployment)
	}
	cfg.Owner, cfg.PolicyName = &p, t.PolicyName
	cfg.AppAttempts, cfg.AppDelay, cfg.MarkSDKRetries = t.AppAttempts, t.AppDelay, t.MarkSDKRetries
	return nil
}

// toDeployment rewrites an Azure request for deployment instead of from:
// the same endpoint, body and key.
func toDeployment(from, deployment string) func(*http.Request) (*http.Request, error) {
	old := "/openai/deployments/" + url.PathEscape(from) + "/"
	repl := "/openai/deployments/" + url.PathEscape(deployment) + "/"
	return func(r *http.Request) (*http.Request, error) {
		u := *r.URL
		if !strings.Contains(u.Path, old) {
			return nil, errors.New("the request is not for the deployment a fallback replaces")
		}
		u.Path = strings.Replace(u.Path, old, repl, 1)
		u.RawPath = ""
		r.URL = &u
		r.Host = ""
		return r, nil
	}
}

// simulated is the client that reaches the embedded simulator at url: the
// Spec's request settings, the Azure API, a dummy key.
func (t *Target) simulated(base, deployment string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*client.Target, error) {
	sc := t.simConfig()
	s := t.Spec
	s.APIKeyEnv, s.Endpoint, s.URL, s.Deployment = "", "", "", ""
	s.KeyOptional = true // the key is set below
	s.API = simAPI[sc.Dialect]
	switch s.API {
	case client.APIAzure:
		s.Endpoint, s.Deployment = base, deployment
	case client.APIGemini:
		s.URL, s.Model = base, deployment
	default:
		s.URL, s.Model = base+sc.Path(false), deployment
	}
	cfg, err := client.Resolve(s, func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	cfg.Key, cfg.KeyHeader, cfg.MaxConns, cfg.DialContext = "sim", "", t.MaxConns, dial
	if err := t.configure(&cfg); err != nil {
		return nil, err
	}
	if err := t.own(&cfg, t.simConfig().SpilloverDeployment); err != nil {
		return nil, err
	}
	return client.New(cfg)
}

// Client is the client of a named target (not the embedded simulator),
// with Owner, Fallback and the emulation fields applied: what the policy
// lab sends through, one per client of its fleet.
func (t *Target) Client() (*client.Target, error) {
	if t.Embedded() {
		return nil, errors.New("campaign: Client is for a named target")
	}
	return t.named()
}
