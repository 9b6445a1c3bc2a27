package results

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ptuprobe/ptuprobe/internal/valid"
)

// MaxGroupLen bounds a group label, in characters.
const MaxGroupLen = 64

// ValidateGroup reports why label cannot be a group label, or nil. It is
// the one rule for a label, whether it is written on rows or published: a
// label written on a row ends up as a cell of the published CSVs and of a
// Markdown table, so it must be: not blank, valid UTF-8, at most
// MaxGroupLen characters, free of commas, and printable as unicode.IsPrint
// says — no control characters and no space but U+0020, so a no-break
// space that looks like a space is refused before any traffic is sent, not
// when the report is written. The error is a *valid.Error for the field
// Group.
func ValidateGroup(label string) error {
	const field = "Group"
	switch {
	case strings.TrimSpace(label) == "":
		return valid.Errorf(field, "must not be blank")
	case !utf8.ValidString(label):
		return valid.Errorf(field, "must be valid UTF-8")
	case utf8.RuneCountInString(label) > MaxGroupLen:
		return valid.Errorf(field, "must be at most %d characters", MaxGroupLen)
	}
	i := 0
	for _, r := range label {
		i++
		switch {
		case r == ',':
			return valid.Errorf(field, "must fit one CSV cell: it contains a comma at character %d", i)
		case !unicode.IsPrint(r):
			return valid.Errorf(field, "must be printable: character %d is %U", i, r)
		}
	}
	return nil
}
