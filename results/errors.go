package results

import "errors"

// ErrHeaderMismatch is returned by Create for an existing file whose first
// line is not this version's results header: it is left untouched.
var ErrHeaderMismatch = errors.New("not a ptuprobe results file with the current columns")
