package referee

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/sim"
)

// Check names, in the order of the verdict.
const (
	CheckRequests           = "requests"
	CheckForeignKeys        = "foreign_keys"
	CheckEarlyReturns       = "early_returns"
	CheckOwners             = "owners"
	CheckAttemptsPerRequest = "attempts_per_request"
	CheckHTTP429PerSuccess  = "http_429_per_success"
	CheckHerd               = "herd"
	CheckOverBudget         = "over_budget"
	CheckIncomplete         = "incomplete"
)

var checkOrder = map[string]int{
	CheckRequests: 0, CheckForeignKeys: 1, CheckEarlyReturns: 2, CheckOwners: 3, CheckAttemptsPerRequest: 4,
	CheckHTTP429PerSuccess: 5, CheckHerd: 6, CheckOverBudget: 7, CheckIncomplete: 8,
}

func checkNames() string {
	names := make([]string, len(checkOrder))
	for n, i := range checkOrder {
		names[i] = n
	}
	return strings.Join(names, ", ")
}

// Expectation is what must hold of one check: NAME OP VALUE.
type Expectation struct {
	Name  string
	Op    string // one of <= < >= > == !=
	Value float64
}

// String is the expectation as it parses: "owners<=1".
func (e Expectation) String() string {
	return e.Name + e.Op + strconv.FormatFloat(e.Value, 'g', -1, 64)
}

// holds reports whether v meets the expectation.
func (e Expectation) holds(v float64) bool {
	switch e.Op {
	case "<=":
		return v <= e.Value
	case "<":
		return v < e.Value
	case ">=":
		return v >= e.Value
	case ">":
		return v > e.Value
	case "==":
		return v == e.Value
	}
	return v != e.Value
}

// operators, longest first so ">=" is not read as ">".
var operators = []string{">=", "<=", "==", "!=", ">", "<"}

// ParseExpectation reads "NAME OP NUMBER", the grammar of analyze's
// --fail-if read the other way round: what must hold, e.g. "owners<=1".
func ParseExpectation(s string) (Expectation, error) {
	e := strings.TrimSpace(s)
	for i := range len(e) {
		for _, op := range operators {
			if !strings.HasPrefix(e[i:], op) {
				continue
			}
			name, rhs := strings.TrimSpace(e[:i]), strings.TrimSpace(e[i+len(op):])
			if _, ok := checkOrder[name]; !ok {
				return Expectation{}, fmt.Errorf("%q: no check %q (known: %s)", clip(e), clip(name), checkNames())
			}
			v, err := strconv.ParseFloat(rhs, 64)
			if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
				return Expectation{}, fmt.Errorf("%q: %q after %s is not a number", clip(e), clip(rhs), op)
			}
			return Expectation{Name: name, Op: op, Value: v}, nil
		}
	}
	return Expectation{}, fmt.Errorf("%q: want NAME OP NUMBER, e.g. owners<=1 (OP one of <= < >= > == !=)", clip(e))
}

// MaxHerd is the herd that `--expect 'herd<=0.5'` gates on (docs/referee.md,
// "The herd"): at most half of a client's retries in step (within
// sim.HerdWindow, 50 ms, of its median lateness after the deadline it
// honours). A client that sleeps exactly what it was told reads about 1;
// a uniform jitter of J reads 2 × 50 ms ÷ J, so any wider than 200 ms
// passes, and up to a second reads 0.1. It is no default expectation:
// the policy lab, on the referee's own storm and on the PTU default,
// finds a fleet that returns on its deadlines answered as much, as soon
// and as cheaply as one with jitter over the advised wait, or more
// (`TestJitterSparesNoStorm`), so the referee does not fail a client for
// it; it reports it.
const MaxHerd = 0.5

// MinHerdCompared is how many retries a gate on the herd wants compared
// (docs/referee.md): of 10 retries of a client with a second of jitter,
// each in step with a chance of a tenth, 6 or more are one time in 7,000;
// of 1, one in 10.
const MinHerdCompared = 10

// defaultExpectations: what a client that honours advice with jitter,
// with one retry owner and the throwaway key, always meets. The ratios
// are reported only: what is good depends on the load the command
// brings.
func defaultExpectations() map[string]Expectation {
	return map[string]Expectation{
		CheckRequests:     {CheckRequests, ">=", 1},
		CheckForeignKeys:  {CheckForeignKeys, "<=", 0},
		CheckEarlyReturns: {CheckEarlyReturns, "<=", 0},
		CheckOwners:       {CheckOwners, "<=", 1},
		CheckOverBudget:   {CheckOverBudget, "<=", 0},
	}
}

// Check is one graded value: its expectation ("" when only reported)
// and whether it holds (true when only reported).
type Check struct {
	Name   string  `json:"name"`
	Value  float64 `json:"value"`
	Expect string  `json:"expect"`
	Pass   bool    `json:"pass"`
}

// grade turns the simulator's stats into the checks, under the default
// expectations replaced by over; ownerRetries, when > 0, is the most
// waited retries of a call one owner makes. A refusal nobody came back to is
// incomplete, whether the command was still asleep on it at its end or
// had given it up: the witness cannot tell which, and over_budget counts
// only the retries it saw come back past the budget. The herd has no
// default expectation (MaxHerd): it is graded when over names it.
func grade(st sim.Stats, over []Expectation, ownerRetries int) []Check {
	exp := defaultExpectations()
	for _, e := range over {
		exp[e.Name] = e
	}
	attempts := st.Admitted + st.Refused
	values := map[string]float64{
		CheckRequests:           float64(attempts),
		CheckForeignKeys:        float64(st.ForeignKeys),
		CheckEarlyReturns:       float64(st.EarlyReturns),
		CheckOwners:             float64(owners(st, ownerRetries)),
		CheckAttemptsPerRequest: ratio(attempts, attempts-min(st.Retries, attempts)),
		CheckHTTP429PerSuccess:  ratio(st.Refused, st.Admitted),
		CheckHerd:               ratio(st.HerdInStep, st.HerdCompared),
		CheckOverBudget:         float64(st.OverBudget),
		CheckIncomplete:         float64(st.AdvisedWaitsPending) + float64(max(st.InFlight, 0)),
	}
	out := make([]Check, len(checkOrder))
	for name, i := range checkOrder {
		c := Check{Name: name, Value: values[name], Pass: true}
		if e, ok := exp[name]; ok {
			c.Expect, c.Pass = e.Op+" "+strconv.FormatFloat(e.Value, 'g', -1, 64), e.holds(c.Value)
		}
		out[i] = c
	}
	return out
}

// owners is how many retry owners the witness tells apart: one that
// declares its retries (X-Stainless-Retry-Count > 0, or the repeated
// marker of one call), and one that retries without saying so (an
// application loop, a gateway, a bare loop): both are an SDK's count
// restarting under an owner outside it. Two, too, whatever the headers
// say (a gateway may drop them), when a call's retries interleave two
// schedules (sim.Stats.MixedCalls: one back at once after one that
// waited, or a backoff starting over); and, when ownerRetries > 0, when
// a call was retried after a wait more often than that. A client's own
// retry count alone is no second owner (LangChain JS retries 6 times,
// azure-core for Python 10), so ownerRetries is 0, unbounded, unless the
// user knows their stack's.
func owners(st sim.Stats, ownerRetries int) int {
	n := 0
	if st.SDKRetries > 0 || st.MarkedRetries > 0 {
		n++
	}
	if st.UndeclaredRetries > 0 {
		n++
	}
	if st.MixedCalls > 0 || (ownerRetries > 0 && st.MaxCallRetries > uint64(ownerRetries)) {
		n = max(n, 2)
	}
	return n
}

// ratio is a/b rounded to three places; 0 when a is 0, a when b is 0.
func ratio(a, b uint64) float64 {
	if a == 0 {
		return 0
	}
	if b == 0 {
		return float64(a)
	}
	return math.Round(float64(a)/float64(b)*1000) / 1000
}
