package sim

import "time"

// window counts usage within fixed, clock-aligned windows (a second, a
// minute). It moves to a new window only when a call arrives in it — not
// when time passes — which is what makes the gateway's reconcile rule
// observable: a correction aimed at a window the counter has left finds
// nothing to correct.
type window struct {
	size  time.Duration
	limit int64
	index int64 // window the counter is on
	used  int64
}

func newWindow(size time.Duration, limit int64) window {
	return window{size: size, limit: limit, index: -1 << 62}
}

// indexAt is the number of the window containing t (floor division, so
// instants before 1970 still land in the right window).
func (w *window) indexAt(t time.Time) int64 {
	n, s := t.UnixNano(), int64(w.size)
	q := n / s
	if n%s < 0 {
		q--
	}
	return q
}

// arrive moves the counter to the window of now if that is a later one.
func (w *window) arrive(now time.Time) {
	if i := w.indexAt(now); i > w.index {
		w.index = i
		w.used = 0
	}
}

// fits reports whether n more units stay within the limit.
func (w *window) fits(n int64) bool { return w.used+n <= w.limit }

// remaining is what the current window still allows (never negative).
func (w *window) remaining() int64 { return max(0, w.limit-w.used) }

// add charges n to the current window and returns its number.
func (w *window) add(n int64) int64 {
	w.used += n
	return w.index
}

// correct adds delta to window index only if the counter is still on it;
// it reports whether the correction landed.
func (w *window) correct(index, delta int64) bool {
	if index != w.index {
		return false
	}
	w.used = max(0, w.used+delta)
	return true
}

// resetIn is the time from now until the current window ends.
func (w *window) resetIn(now time.Time) time.Duration {
	end := (w.index + 1) * int64(w.size)
	if d := time.Duration(end - now.UnixNano()); d > 0 {
		return d
	}
	return 0
}
