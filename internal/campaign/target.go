package campaign

import (
	"context"
	"fmt"

	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/internal/valid"
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
}

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
	if err := t.Sim.Validate(); err != nil {
		return err
	}
	c, err := t.simulated("http://127.0.0.1:1", t.Sim.Deployment)
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
		return c, c.Close, nil
	}
	// The simulator outlives a cancel until the run has recorded its
	// in-flight requests; the returned func stops it.
	srv, err := sim.Start(context.WithoutCancel(ctx), t.Sim, "127.0.0.1:0")
	if err != nil {
		return nil, nil, fmt.Errorf("start the embedded simulator: %w", err)
	}
	if t.OnSimulator != nil {
		t.OnSimulator(srv.URL)
	}
	c, err := t.simulated(srv.URL, srv.Deployment)
	if err != nil {
		srv.Close()
		return nil, nil, err
	}
	return c, func() { c.Close(); srv.Close() }, nil
}

func (t *Target) named() (*client.Target, error) {
	cfg, err := client.Resolve(t.Spec, t.Getenv)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = t.MaxConns
	return client.New(cfg)
}

// simulated is the client that reaches the embedded simulator at url: the
// Spec's request settings, the Azure API, a dummy key.
func (t *Target) simulated(url, deployment string) (*client.Target, error) {
	s := t.Spec
	s.API, s.Endpoint, s.Deployment, s.APIKeyEnv = client.APIAzure, url, deployment, ""
	cfg, err := client.Resolve(s, func(string) string { return "" })
	if err != nil {
		return nil, err
	}
	cfg.Key, cfg.KeyHeader, cfg.MaxConns = "sim", "api-key", t.MaxConns
	return client.New(cfg)
}
