package analyze

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// DefaultLabels maps the default group of each shape, and the main job's
// refill probe's, to its published label.
var DefaultLabels = map[string]string{
	"burst-shaped":           "Burst-shaped source",
	"scheduled-shaped":       "Scheduled-shaped source",
	results.GroupRefillProbe: "Refill probe", // the main job's
}

// labelError words a results.ValidateGroup error about a label being
// published: "label must be printable: character 6 is U+00A0".
func labelError(err error) string {
	var v *valid.Error
	if errors.As(err, &v) {
		return v.Render(func(string) string { return "label" })
	}
	return err.Error()
}

// Labels renames raw group names to published labels. A raw name with no
// entry keeps its DefaultLabels label, or else itself.
type Labels map[string]string

// parseLabel parses one --label FROM=TO and validates TO with
// results.ValidateGroup, the one rule for a label.
func parseLabel(spec string) (from, to string, err error) {
	from, to, ok := strings.Cut(spec, "=")
	if !ok || from == "" {
		return "", "", fmt.Errorf("%q: want FROM=TO", clip(spec, results.MaxGroupLen))
	}
	if err := results.ValidateGroup(to); err != nil {
		return "", "", fmt.Errorf("%q: %s", clip(spec, results.MaxGroupLen), labelError(err))
	}
	return from, to, nil
}

// ParseLabels parses repeated --label FROM=TO flags.
func ParseLabels(specs []string) (Labels, error) {
	l := Labels{}
	for _, s := range specs {
		from, to, err := parseLabel(s)
		if err != nil {
			return nil, err
		}
		l[from] = to
	}
	return l, nil
}

// Published returns the label under which raw is published.
func (l Labels) Published(raw string) string {
	if to, ok := l[raw]; ok {
		return to
	}
	if to, ok := DefaultLabels[raw]; ok {
		return to
	}
	return raw
}

// clip bounds s for an error message, so a hostile value cannot flood it.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n]) + "…"
}
