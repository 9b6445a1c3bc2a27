package results

import (
	"context"
	"errors"
	"fmt"
	"io"
)

// ColumnPromptTokensSent is the column of the tool's own count of the
// prompt it sent (every sent attempt, refused ones included). A file
// written before it existed lacks it; ReadTimelines reads it when present.
const ColumnPromptTokensSent = "prompt_tokens_sent"

// Timeline is one plan of a recorded run: the rows of one run_id, shape
// and group that its reader kept, in file order (a results file is in
// completion order, not in send order).
type Timeline struct {
	RunID, Shape, Group string
	Rows                []TimelineRow
}

// TimelineRow is what a replay reads of one attempt: when it was meant to
// go and went, what it asked for and what came back. Absent numbers are
// None.
type TimelineRow struct {
	// Line is the row's line in the file (rows of several timelines
	// interleave: Line is their file order).
	Line       int
	Seq        int
	Attempt    int
	IntendedMS float64
	SentMS     float64
	Status     int
	WaitMS     float64
	LatencyMS  float64
	// PromptTokens is the target's usage count; PromptTokensSent the
	// tool's own count of what it sent (ColumnPromptTokensSent), None in a
	// file without the column or on a row never sent.
	PromptTokens, PromptTokensSent int
	MaxTokens, CompletionTokens    int
}

// Prompt is the row's prompt size: the tool's count of what it sent when
// the file has it, else the target's usage count, else None.
func (r *TimelineRow) Prompt() int {
	if r.PromptTokensSent >= 0 {
		return r.PromptTokensSent
	}
	return r.PromptTokens
}

// Timelines is a recorded run's timelines, in the order of their first
// kept rows (a run's plans in the order it ran them: a characterize
// file's burst, then its schedule).
type Timelines struct {
	List []Timeline
	// Rows counts every row read, kept or not.
	Rows int
}

// ErrTooManyRows is wrapped by ReadTimelines past its bound of kept rows.
var ErrTooManyRows = errors.New("too many rows to replay")

// ReadTimelines reads the recorded run in r (name is the file's, for its
// errors): the rows keep accepts (every row when keep is nil), grouped by
// run_id, shape and group. It is the one reader of a recorded run's
// timeline: fit's replay (every sent attempt at its sent time), the
// policy lab's and the trace reader's arrivals (first attempts at their
// intended time). More than maxRows kept rows is ErrTooManyRows, so a
// file never takes unbounded memory. A file that is not a results file is
// ErrNotResults (from NewReader).
func ReadTimelines(ctx context.Context, r io.Reader, name string, keep func(*Record) bool, maxRows int) (Timelines, error) {
	rd, err := NewReader(r, name)
	if err != nil {
		return Timelines{}, err
	}
	var out Timelines
	at := map[string]int{} // run, shape, group → index in out.List
	kept := 0
	rec := Blank()
	for {
		if out.Rows%4096 == 0 && ctx.Err() != nil {
			return Timelines{}, ctx.Err()
		}
		err := rd.Read(&rec)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return Timelines{}, err
		}
		out.Rows++
		if keep != nil && !keep(&rec) {
			continue
		}
		if kept++; kept > maxRows {
			return Timelines{}, fmt.Errorf("%s: more than %d rows: %w", name, maxRows, ErrTooManyRows)
		}
		k := rec.RunID + "\x00" + rec.Shape + "\x00" + rec.Group
		i, ok := at[k]
		if !ok {
			i = len(out.List)
			at[k] = i
			out.List = append(out.List, Timeline{RunID: rec.RunID, Shape: rec.Shape, Group: rec.Group})
		}
		out.List[i].Rows = append(out.List[i].Rows, TimelineRow{
			Line: rd.Line(), Seq: rec.Seq, Attempt: rec.Attempt, IntendedMS: rec.IntendedMS, SentMS: rec.SentMS,
			Status: rec.Status, WaitMS: rec.WaitMS, LatencyMS: rec.LatencyMS,
			PromptTokens: rec.PromptTokens, PromptTokensSent: rec.PromptTokensSent,
			MaxTokens: rec.MaxTokens, CompletionTokens: rec.CompletionTokens,
		})
	}
}
