package campaign

import (
	"fmt"
	"sync"
	"time"

	"github.com/ptuprobe/ptuprobe/burst"
	"github.com/ptuprobe/ptuprobe/results"
)

// The main job's burst plan grows its waves until one meets a refusal:
// its first contact with 100%. A PTU deployment's burst allowance is full
// only until the first refusal forfeits it, so only the wave that first
// overruns the deployment shows it whole; after it the run sees only what
// comes back, at allowance ÷ refill tokens a second, which tells the
// ratio, not the two apart. A deployment whose capacity and allowance
// take the first wave whole (bench/twin-unseen.sh's target c: 400 PTU, a
// 3 s bucket and 50% of it, some 64 sends of the default request, met by
// waves of 40: admitted 40, 40, 23 and 21) was never seen with its
// allowance full, and its fitted allowance ranged over 8,400×. Doubling a
// wave admitted whole makes the wave after it overrun such a deployment
// while its allowance is still full.
const (
	// GrowFactor is how many times the wave before it a wave grows to
	// when no send of the plan has been refused yet.
	GrowFactor = 2
	// GrowBound bounds a grown wave: at most this many times the plan's
	// wave size (and within the caps: FirstContact).
	GrowBound = 4
)

// Contact is a burst plan whose waves grow until a refusal (the main
// job's, FirstContact): wave 0 is Config.Size; wave w is GrowFactor ×
// wave w−1's size, at most Most, when no first attempt of waves 0 to w−1
// was answered 429 by the time wave w's sends past Config.Size are due;
// otherwise, and every wave after, Config.Size. Every wave goes at its
// planned time (w × Gap), all at once (Spread 0): the rows' wave column
// is what each wave sent, and fit replays the rows, not the rule.
type Contact struct {
	Config burst.Config
	// Most is the largest a wave may grow to: at least Config.Size
	// (Config.Size: the waves never grow).
	Most int
}

// Sizes are the waves' sizes when every one before them is admitted
// whole: the plan at its largest.
func (c Contact) Sizes() []int {
	out := make([]int, c.Config.Waves)
	size := c.Config.Size
	for w := range out {
		if w > 0 {
			size = min(GrowFactor*size, c.Most)
		}
		out[w] = size
	}
	return out
}

// MostRequests is the plan's requests at its largest (Sizes).
func (c Contact) MostRequests() int {
	n := 0
	for _, s := range c.Sizes() {
		n += s
	}
	return n
}

// Peak is the largest wave the plan can send.
func (c Contact) Peak() int { return max(c.Config.Size, c.Most) }

// Grows says whether any wave can grow: more than one wave, of 2 sends
// or more (dispatch reads a plan one arrival ahead of the one it waits
// for, so a wave's size is decided no sooner than its second send goes
// out), sent at once, and a bound above the size.
func (c Contact) Grows() bool {
	return c.Config.Waves > 1 && c.Config.Size >= 2 && c.Config.Spread == 0 && c.Most > c.Config.Size
}

// FirstContact bounds the main job's growing waves (Contact) by the
// caps: a wave at most GrowBound × c.Size, at most maxInFlight (a larger
// wave would not go at once) and at most what keeps the plan's requests,
// at its largest, within room (the bound on requests less the other
// plans' most). A Contact whose Most is c.Size does not grow.
func FirstContact(c burst.Config, room, maxInFlight int) Contact {
	out := Contact{Config: c, Most: c.Size}
	hi := GrowBound * c.Size
	if maxInFlight > 0 {
		hi = min(hi, maxInFlight)
	}
	if c.Spread != 0 || c.Waves < 2 || c.Size < 2 || hi <= c.Size {
		return out
	}
	// The largest bound whose plan fits room: MostRequests grows with
	// Most.
	lo := c.Size
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if (Contact{Config: c, Most: mid}).MostRequests() <= room {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out.Most = lo
	return out
}

// GrowFirstContact is the main job's burst plan c (waitWave as
// BurstPlan's) growing to first contact (FirstContact) within what the
// plans after it leave of maxRequests at their most, and maxInFlight;
// its Description says so when those leave the waves no room to grow.
func GrowFirstContact(c burst.Config, waitWave bool, later []Plan, maxRequests, maxInFlight int) (Plan, error) {
	room := maxRequests
	for _, p := range later {
		room -= p.Most()
	}
	f := FirstContact(c, room, maxInFlight)
	p, err := f.Plan(waitWave)
	if err == nil && !f.Grows() && c.Waves > 1 && c.Size >= 2 && c.Spread == 0 {
		p.Description += fmt.Sprintf("; its waves do not grow to first contact: --max-requests %d and --max-in-flight %d leave no room", maxRequests, maxInFlight)
	}
	return p, err
}

// Plan is the growing burst plan (BurstPlan's, its pacer the rule's, its
// Description the rule's and bounds), waitWave as BurstPlan's; the plan
// as BurstPlan gives it when no wave can grow.
func (c Contact) Plan(waitWave bool) (Plan, error) {
	p, err := BurstPlan(c.Config, waitWave)
	if err != nil || !c.Grows() {
		return p, err
	}
	p.Contact = &c
	p.Pacer = &contactPacer{c: c, refusedFrom: c.Config.Waves}
	p.Description = c.describe(p)
	return p, nil
}

// contactPacer is the growing plan's pacer: wave by wave, the size of
// each decided when its send past Config.Size is asked for (seeAnswer
// tells it the refusals).
type contactPacer struct {
	c          Contact
	wave, j    int // the next send: its wave, its index in the wave
	size, prev int // the wave's size (0: not decided yet), the one before's
	stopped    bool
	mu         sync.Mutex
	// refusedFrom is the first wave a first attempt of which was
	// answered 429 (Config.Waves: none yet).
	refusedFrom int
}

func (p *contactPacer) Next() (time.Duration, int, bool) {
	c := p.c.Config
	if p.size == 0 && p.j == c.Size {
		p.size = p.decide()
	}
	if p.size != 0 && p.j == p.size {
		p.prev, p.wave, p.j, p.size = p.size, p.wave+1, 0, 0
	}
	if p.wave >= c.Waves {
		return 0, 0, false
	}
	p.j++
	return time.Duration(p.wave) * c.Gap, p.wave, true
}

// decide is the current wave's size, asked as its send Config.Size
// comes due: dispatch reads one arrival ahead of the one it waits for,
// so its send Config.Size − 2 has gone out, at the wave's time. A wave
// after the first grows while no first attempt of a wave before it was
// refused; once one was, it and every later wave are Config.Size.
func (p *contactPacer) decide() int {
	p.mu.Lock()
	refused := p.refusedFrom < p.wave
	p.mu.Unlock()
	p.stopped = p.stopped || refused
	if p.wave == 0 || p.stopped {
		return p.c.Config.Size
	}
	return min(GrowFactor*p.prev, p.c.Most)
}

// seeAnswer is told every completed attempt of the plan (RunPlans).
func (p *contactPacer) seeAnswer(rec *results.Record) {
	if rec.Status != 429 || rec.Attempt > 1 || rec.Wave < 0 {
		return
	}
	p.mu.Lock()
	p.refusedFrom = min(p.refusedFrom, rec.Wave)
	p.mu.Unlock()
}
