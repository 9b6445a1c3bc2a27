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
	CheckEarlyReturns       = "early_returns"
	CheckOwners             = "owners"
	CheckAttemptsPerRequest = "attempts_per_request"
	CheckHTTP429PerSuccess  = "http_429_per_success"
	CheckHerd               = "herd"
	CheckOverBudget         = "over_budget"
	CheckIncomplete         = "incomplete"
)

var checkOrder = map[string]int{
	CheckRequests: 0, CheckEarlyReturns: 1, CheckOwners: 2, CheckAttemptsPerRequest: 3,
	CheckHTTP429PerSuccess: 4, CheckHerd: 5, CheckOverBudget: 6, CheckIncomplete: 7,
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

// defaultExpectations: what a client that honours advice, with one retry
// owner, always meets. The ratios and the herd are reported only: what
// is good depends on the load the command brings.
func defaultExpectations() map[string]Expectation {
	return map[string]Expectation{
		CheckRequests:     {CheckRequests, ">=", 1},
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
// expectations replaced by over. When the command was ended at the
// timeout, the refusals it had not answered within the budget count as
// over it: a client still sleeping past its budget. (A command that
// exits has given those requests up.)
func grade(st sim.Stats, over []Expectation, timedOut bool) []Check {
	exp := defaultExpectations()
	for _, e := range over {
		exp[e.Name] = e
	}
	attempts := st.Admitted + st.Refused
	values := map[string]float64{
		CheckRequests:           float64(attempts),
		CheckEarlyReturns:       float64(st.EarlyReturns),
		CheckOwners:             float64(owners(st)),
		CheckAttemptsPerRequest: ratio(attempts, attempts-min(st.Retries, attempts)),
		CheckHTTP429PerSuccess:  ratio(st.Refused, st.Admitted),
		CheckHerd:               ratio(st.RetriesAtDeadline, st.RetriesOnTime),
		CheckOverBudget:         float64(st.OverBudget + pastBudgetAtKill(st, timedOut)),
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

func pastBudgetAtKill(st sim.Stats, timedOut bool) uint64 {
	if !timedOut {
		return 0
	}
	return st.PendingPastBudget
}

// owners is how many kinds of retry owner acted: one that declares its
// retries (X-Stainless-Retry-Count > 0, or the repeated marker of one
// call), and one that retries without saying so (an application loop, a
// gateway, a bare loop). Two is a retry stack.
func owners(st sim.Stats) int {
	n := 0
	if st.SDKRetries > 0 || st.MarkedRetries > 0 {
		n++
	}
	if st.UndeclaredRetries > 0 {
		n++
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
