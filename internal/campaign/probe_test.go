package campaign

import (
	"testing"
	"time"

	"github.com/ptuprobe/ptuprobe/internal/charplan"
	"github.com/ptuprobe/ptuprobe/results"
)

// TestRefillSizing: the probe's wave is the most a burst wave admitted
// and a quarter more (at least 2 more), twice the wave size when a wave
// admitted every send (the bucket and the allowance not found) or none
// admitted any, never more than that.
func TestRefillSizing(t *testing.T) {
	t.Parallel()
	s := RefillSizing{Rest: charplan.RefillRest, Size: 40}
	for _, c := range []struct {
		admitted []int
		want     int
	}{
		{[]int{39, 12, 16, 14}, 49}, // served target a: 39 + 10
		{[]int{10, 2, 2}, 13},       // b: 10 + 3
		{[]int{4, 1}, 6},            // at least 2 more
		{[]int{40, 23, 21}, 80},     // c: its first wave admitted all 40
		{[]int{0, 0, 0, 0}, 80},     // none admitted
		{nil, 80},
	} {
		if got := s.Wave(c.admitted); got != c.want {
			t.Errorf("admitted %v: wave %d, want %d", c.admitted, got, c.want)
		}
	}
	p, err := s.Plan([]int{39, 12})
	if err != nil || p.Planned != 49 || p.Group != results.GroupRefillProbe || p.Shape != results.ShapeBurst || p.Span != charplan.RefillRest {
		t.Fatalf("plan %+v, %v", p, err)
	}
	// Every send at the rest's end, one wave.
	for i := range 49 {
		at, wave, ok := p.Pacer.Next()
		if !ok || at != charplan.RefillRest || wave != 0 {
			t.Fatalf("send %d: %v wave %d ok %v", i, at, wave, ok)
		}
	}
	if _, _, ok := p.Pacer.Next(); ok {
		t.Error("a 50th send")
	}
}

// TestRefillChoice: the probe follows the default plans within the caps
// (left off with a note where they leave no room), a named plan only
// when asked for, and is refused, asked for where it cannot run.
func TestRefillChoice(t *testing.T) {
	t.Parallel()
	b, err := BurstPlan(charplan.Burst(), false)
	if err != nil {
		t.Fatal(err)
	}
	plans := []Plan{b}
	base := RefillChoice{Rest: 20 * time.Second, Size: 40, MaxRequests: 10_000, Budget: 10 * time.Minute}
	for _, c := range []struct {
		name   string
		change func(*RefillChoice)
		on     bool
		note   bool
		err    string
	}{
		{"default", func(*RefillChoice) {}, true, false, ""},
		{"off", func(c *RefillChoice) { c.Rest = 0 }, false, false, ""},
		{"named", func(c *RefillChoice) { c.Named = true }, false, false, ""},
		{"named, given", func(c *RefillChoice) { c.Named, c.Given = true, true }, true, false, ""},
		{"no room", func(c *RefillChoice) { c.MaxRequests = 200 }, false, true, ""},
		{"no time", func(c *RefillChoice) { c.Budget = 25 * time.Second }, false, true, ""},
		{"no room, given", func(c *RefillChoice) { c.MaxRequests, c.Given = 200, true }, false, false, "MaxRequests"},
		{"fleet", func(c *RefillChoice) { c.Fleet = true }, false, false, ""},
		{"fleet, given", func(c *RefillChoice) { c.Fleet, c.Given = true, true }, false, false, "RefillRest"},
		{"group, given", func(c *RefillChoice) { c.Group, c.Given = true, true }, false, false, "RefillRest"},
		{"negative", func(c *RefillChoice) { c.Rest = -time.Second }, false, false, "RefillRest"},
	} {
		rc := base
		c.change(&rc)
		p, on, note, err := rc.Probe(plans)
		field := ""
		if f, ok := err.(interface{ Field() string }); ok {
			field = f.Field()
		}
		if on != c.on || (note != "") != c.note || field != c.err || (err != nil) != (c.err != "") || on && p.Planned != 80 {
			t.Errorf("%s: on %v note %q err %v planned %d", c.name, on, note, err, p.Planned)
		}
	}
}
