// Package valid is the one form of a validation error in ptuprobe: a
// domain package that refuses a setting returns an *Error naming the
// setting by its Go field name and saying why, in words that hold no
// command-line vocabulary. The command line (cmd) maps field names to flag
// names when it prints the error; a Go caller prints it as it is, or reads
// the field with errors.As against interface{ Field() string }.
package valid

import (
	"fmt"
	"strings"
)

// Error is one refused setting. Reason may name other settings as {Field};
// Error renders them by their Go names, Render by whatever names the
// caller uses for them.
type Error struct {
	Name   string // the Go field name of the setting, e.g. "Size"
	Reason string // e.g. "must be at least 1", "must be less than {PromptTokens}"
	// Err, when set, is the cause errors.Is and errors.As find beneath
	// (e.g. results.ErrNotResults), so that a caller can add what only it
	// knows (its own flags) without reading the reason's words.
	Err error
}

// Errorf returns an *Error for field with a formatted reason.
func Errorf(field, format string, a ...any) error {
	return &Error{Name: field, Reason: fmt.Sprintf(format, a...)}
}

// Wrapf is Errorf with a cause that errors.Is and errors.As find.
func Wrapf(err error, field, format string, a ...any) error {
	return &Error{Name: field, Reason: fmt.Sprintf(format, a...), Err: err}
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.Err }

// Field returns the Go name of the refused setting.
func (e *Error) Field() string { return e.Name }

// Error renders the error with Go field names: "Size must be at least 1".
func (e *Error) Error() string { return e.Render(nil) }

// Render renders the error with name(field) for every field it names;
// a nil name keeps Go names.
func (e *Error) Render(name func(field string) string) string {
	if name == nil {
		name = func(f string) string { return f }
	}
	var b strings.Builder
	b.WriteString(name(e.Name))
	b.WriteByte(' ')
	r := e.Reason
	for {
		i := strings.IndexByte(r, '{')
		if i < 0 {
			break
		}
		j := strings.IndexByte(r[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(r[:i])
		b.WriteString(name(r[i+1 : i+j]))
		r = r[i+j+1:]
	}
	b.WriteString(r)
	return b.String()
}
