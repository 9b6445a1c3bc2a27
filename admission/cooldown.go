package admission

import (
	"sync"
	"time"
)

// cooldown is a Transport's shared cooldown: the latest end of a wait the
// primary target advised. Requests hold until then instead of collecting
// refusals the server has already announced.
type cooldown struct {
	mu     sync.Mutex
	until  time.Time
	source string // the WaitSource of the advice that set until
}

// extend moves the end to t if t is later (a zero t only reads it), and
// returns the end as it then stands and its source: Coordinator.Cooldown.
func (c *cooldown) extend(t time.Time, source string) (time.Time, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.until) {
		c.until, c.source = t, source
	}
	return c.until, c.source
}

// left is what remains of the cooldown at now (0 when it is over) and the
// source of the advice behind it.
func (c *cooldown) left(now time.Time) (time.Duration, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.until.After(now) {
		return 0, ""
	}
	return c.until.Sub(now), c.source
}
