package trace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/ptuprobe/ptuprobe/results"
)

// FirstAttempt keeps a results row that is a request's first attempt
// with an intended time: a recorded run's arrivals.
func FirstAttempt(rec *results.Record) bool {
	return rec.Attempt == 1 && rec.IntendedMS >= 0 && !math.IsInf(rec.IntendedMS, 0)
}

// readPtuprobe reads a results file's first attempts. Its timelines (a
// run_id's shape and group, in the order of their first rows) are laid
// end to end: each sorted by intended time and started one mean gap
// after the one before ends (a timeline of one instant: a millisecond),
// so a characterize file's burst is followed by its schedule.
func readPtuprobe(ctx context.Context, r io.Reader, name string, lim *limited) (*Trace, error) {
	tl, err := results.ReadTimelines(ctx, r, name, FirstAttempt, MaxRows)
	switch {
	case lim.over:
		return nil, &Error{File: name, Reason: errTooBig.Error()}
	case errors.Is(err, results.ErrTooManyRows):
		return nil, &Error{File: name, Reason: fmt.Sprintf("more than %d first attempts: cut the trace", MaxRows)}
	case err != nil && ctx.Err() != nil:
		return nil, err
	case err != nil:
		// results names the file and line of a bad row.
		line, reason := lineOf(err.Error(), name)
		return nil, &Error{File: name, Line: line, Reason: reason}
	}
	prompt, output, unsized, err := fills(name, tl.List)
	if err != nil {
		return nil, err
	}
	b := builder{name: name}
	var start float64 // ms: where the next timeline begins
	for _, t := range tl.List {
		rows := t.Rows
		slices.SortStableFunc(rows, func(x, y results.TimelineRow) int { return cmp.Compare(x.IntendedMS, y.IntendedMS) })
		first, last := rows[0].IntendedMS, rows[len(rows)-1].IntendedMS
		for i := range rows {
			in, out := rows[i].Prompt(), rows[i].MaxTokens
			if in < 0 {
				in = prompt
			}
			if out < 0 {
				out = output
			}
			at := time.Duration((start + rows[i].IntendedMS - first) * float64(time.Millisecond))
			if err := b.add(int64(at), int64(in), int64(out), nil, ""); err != nil {
				return nil, &Error{File: name, Line: rows[i].Line, Reason: err.Error()}
			}
		}
		start += last - first + meanGapMS(rows)
	}
	t, err := b.trace(FormatPtuprobe)
	if err != nil {
		return nil, err
	}
	t.Span = time.Duration(start * float64(time.Millisecond))
	t.Unsized = unsized
	return t, nil
}

// lineOf takes results' "name line N: why" (or "read name line N: why",
// "name: why") apart: the line and the why, which Error puts back
// together.
func lineOf(msg, name string) (int, string) {
	for _, p := range []string{"read " + name + " ", name + " ", name + ": "} {
		if rest, ok := strings.CutPrefix(msg, p); ok {
			msg = rest
			break
		}
	}
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, why, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil && line > 0 {
				return line, why
			}
		}
	}
	return 0, msg
}

// meanGapMS is a sorted timeline's mean gap between arrivals, in ms: a
// timeline of one instant (a single wave) adds a millisecond.
func meanGapMS(rows []results.TimelineRow) float64 {
	first, last := rows[0].IntendedMS, rows[len(rows)-1].IntendedMS
	if len(rows) < 2 || last == first {
		return 1
	}
	return (last - first) / float64(len(rows)-1)
}

// Sizes a ptuprobe row is given when its file records none: ptuprobe's
// own defaults (client.DefaultPromptTokens, client.DefaultMaxTokens).
const (
	FallbackPromptTokens = 1000
	FallbackOutputTokens = 100
)

// fills are a file's mean known prompt and max_tokens, rounded: what a
// row that lacks one is given (a refused request has no usage count in a
// file written before prompt_tokens_sent), else the fallbacks.
func fills(name string, list []results.Timeline) (prompt, output, unsized int, err error) {
	var ps, os, pn, on float64
	for _, t := range list {
		for i := range t.Rows {
			p, m := t.Rows[i].Prompt(), t.Rows[i].MaxTokens
			if p >= 0 {
				ps += float64(p)
				pn++
			}
			if m >= 0 {
				os += float64(m)
				on++
			}
			if p < 0 || m < 0 {
				unsized++
			}
		}
	}
	if len(list) == 0 {
		return 0, 0, 0, &Error{File: name, Reason: "holds no first attempt with an intended time"}
	}
	prompt, output = FallbackPromptTokens, FallbackOutputTokens
	if pn > 0 {
		prompt = int(math.Round(ps / pn))
	}
	if on > 0 {
		output = int(math.Round(os / on))
	}
	return prompt, output, unsized, nil
}
