package sim

import "time"

// decideWindow is the window profile's admission at now: a request is
// admitted while the clock-aligned window has room, else refused with the
// time to the window's end. Called with s.mu held.
func (s *Server) decideWindow(now time.Time, o *outcome) {
	s.fixed.arrive(now)
	q := s.fixed.quotaOf(now)
	if s.fixed.fits(1) {
		s.fixed.add(1)
		o.admitted = true
		q.remaining--
	} else {
		o.wait = max(q.reset, time.Nanosecond)
		q = q.exhausted()
	}
	o.lim = limits{requests: q, outputWeight: s.cfg.OutputWeight}
}
