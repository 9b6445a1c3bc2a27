package admission

import (
	"math"
	"strconv"
	"time"
)

// Reason says in plain words why the Transport decided as it did after
// an attempt (Decision.Reason), e.g. "advised 45s, does not fit the 12s
// left of the budget; redirect to the fallback". It holds numbers and
// fixed words only, so a Decision stays safe to log.
//
// The words are put together when read: String, and so any fmt verb that
// prints a Stringer (log.Println(d.Reason), %s, %v), returns them. The
// Transport records only the parts as it decides, so an attempt whose
// Reason nobody reads costs no formatting.
type Reason struct{ parts []part }

// String returns the Reason in words ("" for the zero Reason).
func (r Reason) String() string {
	if len(r.parts) == 1 && !r.parts[0].number() {
		return r.parts[0].text
	}
	size := 0
	for _, p := range r.parts {
		size += len(p.text) + 8
	}
	b := make([]byte, 0, size)
	for _, p := range r.parts {
		switch p.text {
		case partShow:
			b = append(b, show(time.Duration(p.n))...)
		case partNum:
			b = strconv.AppendInt(b, p.n, 10)
		case partFloat1:
			b = strconv.AppendFloat(b, math.Float64frombits(uint64(p.n)), 'f', 1, 64)
		case partFloat3:
			b = strconv.AppendFloat(b, math.Float64frombits(uint64(p.n)), 'f', 3, 64)
		case partFloatExact:
			b = strconv.AppendFloat(b, math.Float64frombits(uint64(p.n)), 'f', -1, 64)
		default:
			b = append(b, p.text...)
		}
	}
	return string(b)
}

// A part of a Reason: fixed words, or a number to put in words, marked
// by a text that no words begin with.
type part struct {
	text string
	n    int64 // a duration (partShow), an integer (partNum), float64 bits (partFloat…)
}

const (
	partShow       = "\x00show"   // show(n)
	partNum        = "\x00num"    // n in decimal
	partFloat1     = "\x00float1" // n's float64, one digit after the point
	partFloat3     = "\x00float3" // three digits
	partFloatExact = "\x00float"  // as few digits as give it exactly
)

func (p part) number() bool { return p.text != "" && p.text[0] == 0 }

// words is a Reason being recorded, appended to as a string would be.
type words []part

func (w words) say(s string) words {
	if s == "" {
		return w
	}
	return append(w, part{text: s})
}

func (w words) show(d time.Duration) words { return append(w, part{partShow, int64(d)}) }

func (w words) num(n int) words { return append(w, part{partNum, int64(n)}) }

// float puts f with prec digits after the point: 1, 3, or -1 for as
// few as give it exactly.
func (w words) float(f float64, prec int) words {
	kind := partFloatExact
	switch prec {
	case 1:
		kind = partFloat1
	case 3:
		kind = partFloat3
	}
	return append(w, part{kind, int64(math.Float64bits(f))})
}

// then appends a Reason recorded earlier.
func (w words) then(r Reason) words { return append(w, r.parts...) }

// fixedReason is a Reason of fixed words.
func fixedReason(s string) Reason { return Reason{parts: []part{{text: s}}} }

// Reasons of fixed words, recorded without an allocation.
var (
	reasonNotBuilt    = fixedReason("the request for this attempt could not be built; not sent")
	reasonNoResponse  = fixedReason("no response; this owner retries admission refusals, not network failures; done")
	reasonEndedBefore = fixedReason("the context ended before this attempt; not sent")
	reasonEndedInWait = fixedReason("the context ended during the wait before this attempt; not sent")
	reasonEndedInCool = fixedReason("the context ended while the shared cooldown held this attempt; not sent")
	reasonEndedInPace = fixedReason("the context ended while the pace held this attempt; not sent")
)

// roomParts is the parts a request holds room for before it allocates:
// a refusal's Reason and its retry's answer.
const roomParts = 16

// words opens a Reason in what is left of the request's room for them;
// one that outgrows it moves out, as a slice does. One is open at a time:
// seal it before opening the next.
func (r *request) words() words {
	if r.arena == nil {
		r.arena = r.room[:0]
	}
	return r.arena[len(r.arena):len(r.arena)]
}

// seal ends the Reason w that words opened: its parts are kept, and the
// next Reason goes after them.
func (r *request) seal(w words) Reason {
	if n := len(r.arena); len(w) > 0 && n < cap(r.arena) && &r.arena[n : n+1][0] == &w[0] {
		r.arena = r.arena[:n+len(w)]
	}
	return Reason{parts: w[:len(w):len(w)]}
}
