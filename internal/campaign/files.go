package campaign

import (
	"bufio"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/ptuprobe/ptuprobe/calibrate"
	"github.com/ptuprobe/ptuprobe/internal/valid"
	"github.com/ptuprobe/ptuprobe/results"
)

// checkResultsFile refuses, as a *valid.Error on field, a path that would
// lose data if rows went into it: an existing regular file that is not a
// ptuprobe results file (replacing or appending would destroy or corrupt
// it), or a directory. A missing file, an empty one, or a pipe or device
// is fine.
func checkResultsFile(field, path string) error {
	return checkOwnFile(field, path, "a ptuprobe results file", func(f *os.File) bool {
		_, err := results.NewReader(io.LimitReader(f, results.MaxLine), path)
		return err == nil
	})
}

// checkEvidenceFile refuses an existing regular file that is not an
// evidence table calibrate wrote: writing the table would replace it.
func checkEvidenceFile(field, path string) error {
	return checkOwnFile(field, path, "an evidence table from an earlier calibration", func(f *os.File) bool {
		line, _ := bufio.NewReader(io.LimitReader(f, 4096)).ReadString('\n')
		return strings.TrimRight(line, "\r\n") == strings.Join(calibrate.EvidenceColumns, ",")
	})
}

// checkOwnFile refuses, as a *valid.Error on field, a directory or an
// existing regular file that ours does not recognise as what ptuprobe
// wrote there before (what: its description); a missing or empty file, a
// pipe or a device is fine.
func checkOwnFile(field, path, what string, ours func(*os.File) bool) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return valid.Errorf(field, "cannot be checked: %v", err)
	case st.IsDir():
		return valid.Errorf(field, "names a directory")
	case !st.Mode().IsRegular() || st.Size() == 0:
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		return valid.Errorf(field, "cannot be read: %v", err)
	}
	defer f.Close()
	if !ours(f) {
		return valid.Errorf(field, "names %s, which is not %s; it is left as it is: choose another file", path, what)
	}
	return nil
}

// samePath reports whether a and b name the same file: the same cleaned
// absolute path, or, when both exist, the same inode.
func samePath(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	if sa, err := os.Stat(a); err == nil {
		if sb, err := os.Stat(b); err == nil {
			return os.SameFile(sa, sb)
		}
	}
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}
