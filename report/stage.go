package report

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// stage writes the files of one report under temporary names in their
// directory, and renames them all into place only once every one is
// written (commit); abort removes the temporaries, and the directories the
// stage created, so that an interrupted or failed report leaves the
// directory as it was — an earlier report included. Its files may be
// written at once, from as many goroutines: file i is only ever touched
// by the one that adds it.
type stage struct {
	dir     string
	created []string // directories created for the report, outermost first
	tmps    []string // temporary paths, by file; "" for a file not (yet) created
	names   []string // published paths, by file
}

// newStage creates dir (and its missing parents), remembering which it
// created, for a report of files files.
func newStage(dir string, files int) (*stage, error) {
	s := &stage{dir: dir, tmps: make([]string, files), names: make([]string, files)}
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		s.created = append([]string{d}, s.created...)
		if d == filepath.Dir(d) {
			break
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		s.abort()
		return nil, fmt.Errorf("create output directory: %w", err)
	}
	return s, nil
}

// add writes what write produces to a temporary file for name, file i of
// the report. Writes stop with ctx's error once it is done.
func (s *stage) add(ctx context.Context, i int, name string, write func(io.Writer) error) error {
	path := filepath.Join(s.dir, name)
	f, err := os.CreateTemp(s.dir, "."+name+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	s.tmps[i], s.names[i] = f.Name(), path
	bw := bufio.NewWriterSize(ctxWriter{ctx: ctx, w: f}, 64<<10)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(0o644)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		return fmt.Errorf("report not written: %w", err)
	}
	return fmt.Errorf("write %s: %w", path, err)
}

// commit renames every temporary file to its published name and returns
// the published paths. Renames within one directory do not fail short of
// the directory itself failing; if one does, the files renamed before it
// stay (a set of renames cannot be undone) and the rest are removed.
func (s *stage) commit() ([]string, error) {
	for i, tmp := range s.tmps {
		if err := os.Rename(tmp, s.names[i]); err != nil {
			s.tmps = s.tmps[i:]
			s.created = nil // they now hold part of the report
			s.abort()
			return nil, fmt.Errorf("write %s: %w", s.names[i], err)
		}
	}
	s.tmps = nil
	return s.names, nil
}

// abort removes the temporary files, then the directories the stage
// created (only if they are empty).
func (s *stage) abort() {
	for _, tmp := range s.tmps {
		if tmp != "" {
			os.Remove(tmp)
		}
	}
	s.tmps = nil
	for i := len(s.created) - 1; i >= 0; i-- {
		os.Remove(s.created[i])
	}
	s.created = nil
}

// ctxWriter fails every write once ctx is done, so a long output stops
// within one buffer of a cancel.
type ctxWriter struct {
	ctx context.Context
	w   io.Writer
}

func (c ctxWriter) Write(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.w.Write(p)
}
