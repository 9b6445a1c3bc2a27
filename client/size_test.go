package client

import (
	"testing"
	"unsafe"
)

// An open stream's own heap (bench/README.md, memory per open stream):
// the allocator rounds a size up to its class, so a field added to these
// costs a whole class's step (the streamBody at 264 bytes took 288).
func TestOpenStreamSizeClasses(t *testing.T) {
	for _, c := range []struct {
		name      string
		size, max uintptr
	}{
		{"streamBody", unsafe.Sizeof(streamBody{}), 256},
		{"events", unsafe.Sizeof(events{}), 96},
		{"attemptCtx", unsafe.Sizeof(attemptCtx{}), 128}, // 160 with its deadline a time.Time
		{"reading", unsafe.Sizeof(reading{}), 96},
	} {
		if c.size > c.max {
			t.Errorf("%s is %d bytes, more than its class's %d", c.name, c.size, c.max)
		}
	}
}
