package campaign

import (
	"github.com/ptuprobe/ptuprobe/client"
	"github.com/ptuprobe/ptuprobe/dispatch"
	"github.com/ptuprobe/ptuprobe/sim"
)

// What a capacity search (internal/capacity) reads of a target besides
// Open: the embedded simulator's configuration, to run it in process, and
// the sizes drawn, to send them.

// SimConfig is the embedded simulator's configuration as Open starts it.
func (t *Target) SimConfig() sim.Config { return t.simConfig() }

// Shapes is the Shaper of Lengths: nil when both sizes are fixed (the
// Spec's).
func (t *Target) Shapes() client.Shaper { return t.shapes() }

// WithShapes is s, a Sender Open returned, sending the sizes of shapes
// (a replayed trace's): the same client, its connections shared.
func WithShapes(s dispatch.Sender, shapes client.Shaper) (dispatch.Sender, error) {
	return s.(sender).shaped(shapes)
}
