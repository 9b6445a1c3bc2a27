package results

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Writer appends Records to a results file. Each Write is flushed to the
// file before it returns, so an interrupted run keeps every completed row.
// It is safe for concurrent use.
type Writer struct {
	mu   sync.Mutex
	f    *os.File
	w    io.Writer
	buf  []byte
	name string
	rows int
}

// Create opens path for appending. A new or empty file gets the header; an
// existing file must start with exactly this header, else an error naming
// the file is returned and the file is left untouched.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open results file: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open results file %s: %w", path, err)
	}
	if st.Size() > 0 {
		// Only as much as a matching header line can take: the first line
		// of a foreign file may be gigabytes long.
		n := min(st.Size(), int64(len(header)+len("\r\n")))
		line, err := bufio.NewReader(io.NewSectionReader(f, 0, n)).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			f.Close()
			return nil, fmt.Errorf("read results file %s: %w", path, err)
		}
		got := strings.TrimRight(line, "\r\n")
		if got != header {
			f.Close()
			return nil, fmt.Errorf("%w: %s (its header is %q); choose another file", ErrHeaderMismatch, path, truncate(got, 80))
		}
		// A crash can leave a partial last line; start ours on a fresh one.
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, fmt.Errorf("write %s: %w", path, err)
			}
		}
	} else if _, err := f.WriteString(header + "\n"); err != nil {
		f.Close()
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &Writer{f: f, w: f, name: path, buf: make([]byte, 0, 512)}, nil
}

// NewWriter writes rows (and a header) to w, for tests and pipes.
func NewWriter(w io.Writer) (*Writer, error) {
	if _, err := io.WriteString(w, header+"\n"); err != nil {
		return nil, err
	}
	return &Writer{w: w, buf: make([]byte, 0, 512)}, nil
}

// Write appends one row and flushes it to the file.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = AppendCSV(w.buf[:0], r)
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("write %s: %w", w.name, err)
	}
	w.rows++
	return nil
}

// Rows returns how many rows this Writer has written.
func (w *Writer) Rows() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rows
}

// Close syncs the file to disk and closes it.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	w.f = nil
	if serr != nil {
		return fmt.Errorf("sync %s: %w", w.name, serr)
	}
	return cerr
}
