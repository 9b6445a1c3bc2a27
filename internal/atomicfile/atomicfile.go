// Package atomicfile writes a file so that its name never holds half of
// it: the content goes to a temporary file in the same directory, which is
// renamed over the name only once it is complete and closed. A name that
// is not a regular file (/dev/null, /dev/stdout, a named pipe) is written
// through, never replaced, and a symbolic link keeps pointing where it
// did: the file it names is replaced.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write creates or replaces path with what write produces, mode 0644. On
// any error the temporary file is removed and path is left as it was.
//
// When path exists and is not a regular file — a device such as
// /dev/null, a named pipe — what write produces is written to it as it
// is opened (`ptuprobe fit -o /dev/null` discards the profile): renamed
// over, /dev/null would have become a regular file for every process on
// the machine (as root), and without root the temporary file could not
// be made in /dev at all. A symbolic link is followed: the file it names
// is replaced and the link kept.
func Write(path string, write func(io.Writer) error) (err error) {
	if st, statErr := os.Stat(path); statErr == nil {
		switch {
		case st.IsDir():
			return fmt.Errorf("write %s: is a directory", path)
		case !st.Mode().IsRegular():
			return writeThrough(path, write)
		}
		if target, linkErr := filepath.EvalSymlinks(path); linkErr == nil {
			path = target
		}
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err := write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeThrough writes to a file that is not a regular one as it is
// opened: write-only, neither created nor truncated.
func writeThrough(path string, write func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
