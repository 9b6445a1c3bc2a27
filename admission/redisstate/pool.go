package redisstate

import "sync"

// Pool opens Coordinators on one Redis, each on a deployment's state of
// its own, as the processes of a fleet would, and sums what they fell
// back on: for a process that runs many owners (ptuprobe's policy lab
// opens one per simulated client). Each Coordinator is its opener's to
// close. It is safe for concurrent use.
type Pool struct {
	url, password string
	o             Options

	mu     sync.Mutex
	opened []*Coordinator
}

// NewPool returns a Pool on the Redis at rawURL (as Open takes it) whose
// Coordinators take o, each with its own Deployment.
func NewPool(rawURL, password string, o Options) *Pool {
	return &Pool{url: rawURL, password: password, o: o}
}

// Open opens a Coordinator on deployment's state (Open's errors).
func (p *Pool) Open(deployment string) (*Coordinator, error) {
	o := p.o
	o.Deployment = deployment
	c, err := Open(p.url, p.password, o)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.opened = append(p.opened, c)
	p.mu.Unlock()
	return c, nil
}

// Fallbacks sums the decisions every Coordinator it opened took on the
// process's own state.
func (p *Pool) Fallbacks() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := int64(0)
	for _, c := range p.opened {
		n += c.Fallbacks()
	}
	return n
}
