package sim

import (
	"math"
	"slices"
	"sort"
	"time"
)

// MaxHerdLateness bounds the record the herd is measured on: the
// lateness of the last MaxHerdLateness (retry, field) pairs, older ones
// forgotten. Full, it holds 512 KB.
const MaxHerdLateness = 1 << 16

// HerdWindow is how close, in wall time, a retry's lateness against a
// field must be to its key's median lateness against that field to count
// in step (Stats.HerdInStep). A client that sleeps exactly what it was
// told is late by its own overhead (the answer's way back, its event
// loop, the next connection), about the same every time: its retries
// keep in step, and so do those of every call it was told one deadline,
// which come back together. Jitter uniform over J spreads them: 2 ×
// HerdWindow ÷ J of them stay in step (a tenth for a second). Wider than
// a busy machine's scheduling noise (QuickRetryWindow's reasoning),
// narrower than the 100 ms slots the policy lab's `slots` spreads a herd
// with, where jitter ×[1, 1.2] of the PTU's 100 ms waits (20 ms) did not
// spread it.
const HerdWindow = 50 * time.Millisecond

// latenessLog is the record of the last MaxHerdLateness latenesses, a
// ring like the witness's memory. Each is one word, so that sorting a
// full record takes a few milliseconds (Stats sorts it): the field's
// source (4 bits), the key's index (28; MaxKeys is at most a million)
// and the lateness in wall microseconds, biased by 2³¹ (32: ±35 minutes,
// later or sooner ones kept as that).
type latenessLog struct {
	ring []uint64
	next int // the oldest slot once the ring is full
}

// latenessBias makes a lateness in wall microseconds an unsigned word.
const latenessBias = 1 << 31

// packLateness is one record entry: a retry of key late against source
// by late wall microseconds.
func packLateness(source adviceSource, key int, lateUS float64) uint64 {
	biased := min(max(math.Round(lateUS)+latenessBias, 0), math.MaxUint32)
	return uint64(source)<<60 | uint64(key)&(1<<28-1)<<32 | uint64(biased)
}

// note records the lateness of retry r of key ks against each field its
// refusal wrote, in wall time (model time ÷ scale, the inverse of
// modelTime). A key past the table (ks nil) is not recorded. Called with
// s.mu held.
func (l *latenessLog) note(ks *keyState, r recalled, scale float64) {
	if ks == nil {
		return
	}
	sinceUS := float64(r.since) / float64(time.Microsecond) / scale
	for i := range r.fields.n {
		e := packLateness(r.fields.src[i], ks.index, sinceUS-1000*float64(r.fields.ms[i]))
		if len(l.ring) < MaxHerdLateness {
			if len(l.ring) == cap(l.ring) { // grow by doubling, never past the bound
				l.ring = append(make([]uint64, 0, min(MaxHerdLateness, 2*len(l.ring)+64)), l.ring...)
			}
			l.ring = append(l.ring, e)
			continue
		}
		l.ring[l.next] = e
		l.next = (l.next + 1) % MaxHerdLateness
	}
}

// herdOf measures the herd in the record's latenesses (sorted in place):
// per key and field, every lateness but the median one is compared with
// the median, and is in step within HerdWindow of it. Comparing a key's
// retries with their own median, not with the deadline, leaves out what
// is the same every time, the client's own latency (Node's event loop
// and Go's net/http read alike); reading each field apart leaves out
// another field's rounding (retry-after's whole seconds beside a
// millisecond reset); the median of all of them, not of the last few,
// does not follow the order concurrent retries arrive in. The source
// returned is the field whose retries keep in step the most, the one the
// client honours (ties: the one compared more, then the first); "" when
// nothing was compared.
func herdOf(latenesses []uint64) (source string, compared, inStep uint64) {
	slices.Sort(latenesses) // by source, key, then lateness
	window := uint64(HerdWindow / time.Microsecond)
	var by [numSources]struct{ compared, inStep uint64 }
	for len(latenesses) > 0 {
		n := 1
		for n < len(latenesses) && latenesses[n]>>32 == latenesses[0]>>32 {
			n++
		}
		group := latenesses[:n]
		latenesses = latenesses[n:]
		median := group[(n-1)/2]
		// Within one group the words differ only in their lateness.
		near := sort.Search(n, func(i int) bool { return group[i] >= median+window }) -
			sort.Search(n, func(i int) bool { return group[i]+window > median })
		st := &by[group[0]>>60]
		st.compared += uint64(n - 1)
		st.inStep += uint64(near - 1)
	}
	best := adviceSource(0)
	for i := range numSources {
		if st, b := by[i], by[best]; st.inStep > b.inStep || (st.inStep == b.inStep && st.compared > b.compared) {
			best = i
		}
	}
	if by[best].compared == 0 {
		return "", 0, 0
	}
	return best.String(), by[best].compared, by[best].inStep
}
