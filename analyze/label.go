package analyze

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLabelLen bounds a published group label, in characters.
const MaxLabelLen = 64

// DefaultLabels maps the default group of each shape to its published label.
var DefaultLabels = map[string]string{
	"burst-shaped":     "Burst-shaped source",
	"scheduled-shaped": "Scheduled-shaped source",
}

// ValidateLabel reports why label cannot be published, or nil. A published
// label is a cell of a CSV and of a Markdown table: printable, no comma, no
// newline, at most MaxLabelLen characters.
func ValidateLabel(label string) error {
	switch {
	case strings.TrimSpace(label) == "":
		return fmt.Errorf("label is empty")
	case !utf8.ValidString(label):
		return fmt.Errorf("label %q is not valid UTF-8", label)
	case utf8.RuneCountInString(label) > MaxLabelLen:
		return fmt.Errorf("label %q is longer than %d characters", clip(label, MaxLabelLen), MaxLabelLen)
	case strings.ContainsRune(label, ','):
		return fmt.Errorf("label %q contains a comma", label)
	}
	for _, r := range label {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("label %q contains a non-printable character", label)
		}
	}
	return nil
}

// Labels renames raw group names to published labels. A raw name with no
// entry keeps its DefaultLabels label, or else itself.
type Labels map[string]string

// ParseLabel parses one --label FROM=TO and validates TO.
func ParseLabel(spec string) (from, to string, err error) {
	from, to, ok := strings.Cut(spec, "=")
	if !ok || from == "" {
		return "", "", fmt.Errorf("--label %q: want FROM=TO", clip(spec, MaxLabelLen))
	}
	if err := ValidateLabel(to); err != nil {
		return "", "", fmt.Errorf("--label %q: %w", clip(spec, MaxLabelLen), err)
	}
	return from, to, nil
}

// ParseLabels parses repeated --label FROM=TO flags.
func ParseLabels(specs []string) (Labels, error) {
	l := Labels{}
	for _, s := range specs {
		from, to, err := ParseLabel(s)
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
