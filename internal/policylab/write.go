package policylab

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/ptuprobe/ptuprobe/internal/num"
)

// CSVColumns is the header of policies.csv.
var CSVColumns = []string{
	"policy", "requests", "succeeded", "success_pct", "gave_up", "redirected", "attempts",
	"attempts_per_request", "http_429", "e2e_p50_ms", "e2e_p90_ms", "e2e_p99_ms", "e2e_max_ms",
	"over_budget", "early_retries",
}

// Ranked returns the measures ranked as policies.md ranks them: by success
// share, then by p99 end-to-end latency, then by name.
func Ranked(ms []Measure) []Measure {
	out := slices.Clone(ms)
	slices.SortStableFunc(out, func(a, b Measure) int {
		if c := cmp.Compare(b.SuccessShare(), a.SuccessShare()); c != 0 {
			return c
		}
		if c := cmp.Compare(a.E2EPercentile(99), b.E2EPercentile(99)); c != 0 {
			return c
		}
		return strings.Compare(a.Policy, b.Policy)
	})
	return out
}

func ms(v float64) string {
	if v < 0 {
		return ""
	}
	return num.Decimal(v, 2)
}

// WriteCSV writes policies.csv: one row per policy, in the order given.
func WriteCSV(w io.Writer, ms []Measure) error {
	var b strings.Builder
	b.WriteString(strings.Join(CSVColumns, ",") + "\n")
	for i := range ms {
		m := &ms[i]
		row := []string{
			m.Policy, strconv.Itoa(m.Requests), strconv.Itoa(m.Succeeded), num.Decimal(100*m.SuccessShare(), 2),
			strconv.Itoa(m.GaveUp), strconv.Itoa(m.Redirected), strconv.Itoa(m.Attempts),
			num.Decimal(m.AttemptsPerRequest(), 3), strconv.Itoa(m.HTTP429),
			msOf(m, 50), msOf(m, 90), msOf(m, 99), msOf(m, 100),
			strconv.Itoa(m.OverBudget), strconv.Itoa(m.EarlyRetries),
		}
		b.WriteString(strings.Join(row, ",") + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func msOf(m *Measure, p float64) string { return ms(m.E2EPercentile(p)) }

// WriteMarkdown writes policies.md: the table ranked by success then p99,
// the simulator's independent counts, and a plain reading.
func WriteMarkdown(w io.Writer, ms []Measure, lab Setup) error {
	ranked := Ranked(ms)
	var b strings.Builder
	b.WriteString("# Client policies on the same traffic\n\n")
	b.WriteString(intro(lab) + "\n\n")
	writeMarkdownTable(&b, tableHead, ranked, tableRow)
	if witnessed(ms) {
		b.WriteString("\n## What the simulator saw\n\n")
		b.WriteString(witnessIntro + "\n\n")
		writeMarkdownTable(&b, witnessHead, ranked, witnessRow)
	}
	b.WriteString("\n## Reading\n\n")
	b.WriteString(Reading(ranked, lab) + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// intro says what every policy sent, and how the table reads.
func intro(lab Setup) string {
	return fmt.Sprintf("Every policy sent the same plan (%d requests, the same arrivals and seed) to %s. ", lab.Requests, lab.Target) +
		"End-to-end latency runs from a request's first send to its last answer, waits included. " +
		fmt.Sprintf("Over budget: requests that took longer than %s. Ranked by success, then p99. Descriptive of these runs, not a guarantee.", lab.Budget)
}

// tableHead and tableRow are the ranked table of policies.md and
// report.html.
var tableHead = []string{"policy", "requests", "succeeded", "gave up", "redirected", "attempts / request", "429s", "e2e p50", "e2e p99", "e2e max", "over budget", "early retries"}

func tableRow(m *Measure) []string {
	return []string{
		m.Policy, num.Grouped(float64(m.Requests), 0),
		num.Grouped(float64(m.Succeeded), 0) + " (" + num.Decimal(100*m.SuccessShare(), 1) + "%)",
		num.Grouped(float64(m.GaveUp), 0), num.Grouped(float64(m.Redirected), 0), num.Decimal(m.AttemptsPerRequest(), 2),
		num.Grouped(float64(m.HTTP429), 0), millis(m.E2EPercentile(50)), millis(m.E2EPercentile(99)), millis(m.E2EPercentile(100)),
		num.Grouped(float64(m.OverBudget), 0), num.Grouped(float64(m.EarlyRetries), 0),
	}
}

// witnessIntro, witnessHead and witnessRow are the simulator's counts.
const witnessIntro = "Counted by the simulator, independently of the client's rows: requests that came back before the wait advised to them had passed, and requests that declared themselves SDK retries (`X-Stainless-Retry-Count` > 0)."

var witnessHead = []string{"policy", "came back early", "declared SDK retries"}

func witnessRow(m *Measure) []string {
	return []string{m.Policy, num.Grouped(float64(m.SimEarlyReturns), 0), num.Grouped(float64(m.SimSDKRetries), 0)}
}

func writeMarkdownTable(b *strings.Builder, head []string, ranked []Measure, row func(*Measure) []string) {
	b.WriteString("| " + strings.Join(head, " | ") + " |\n|" + strings.Repeat("---|", len(head)) + "\n")
	for i := range ranked {
		b.WriteString("| " + strings.Join(row(&ranked[i]), " | ") + " |\n")
	}
}

func witnessed(ms []Measure) bool {
	for _, m := range ms {
		if m.SimEarlyReturns < 0 {
			return false
		}
	}
	return len(ms) > 0
}

func millis(v float64) string {
	if v < 0 {
		return "—"
	}
	return num.Grouped(v, 0) + " ms"
}

// Reading is a plain description of the ranked table: who kept the most
// requests, at what latency, and what retrying cost in attempts.
func Reading(ranked []Measure, lab Setup) string {
	if len(ranked) == 0 {
		return "No policy ran."
	}
	best := &ranked[0]
	s := fmt.Sprintf("On these runs, %s completed the most requests (%s%%) with a p99 end-to-end latency of %s.",
		best.Policy, num.Decimal(100*best.SuccessShare(), 1), millis(best.E2EPercentile(99)))
	fewest, most := &ranked[0], &ranked[0]
	for i := range ranked {
		m := &ranked[i]
		if m.AttemptsPerRequest() < fewest.AttemptsPerRequest() {
			fewest = m
		}
		if m.AttemptsPerRequest() > most.AttemptsPerRequest() {
			most = m
		}
	}
	if most != fewest {
		s += fmt.Sprintf(" Attempts per request ranged from %s (%s) to %s (%s): every extra attempt is load the deployment must refuse or serve.",
			num.Decimal(fewest.AttemptsPerRequest(), 2), fewest.Policy, num.Decimal(most.AttemptsPerRequest(), 2), most.Policy)
	}
	var early []string
	for i := range ranked {
		if n := ranked[i].EarlyRetries; n > 0 {
			early = append(early, fmt.Sprintf("%s (%d)", ranked[i].Policy, n))
		}
	}
	if len(early) > 0 {
		s += " Retried before the advised wait had passed: " + strings.Join(early, ", ") + "; such retries are refused again."
	}
	return s + " This describes these runs against " + lab.Target + "; another deployment, load or time can rank the policies differently."
}
