package results

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Writer appends Records to a results file. Each Write is flushed to the
// file before it returns, so an interrupted run keeps every completed row.
// It is safe for concurrent use.
type Writer struct {
	mu       sync.Mutex
	written  sync.Cond // signalled when a batch has been written
	f        *os.File
	w        io.Writer
	buf      []byte // the open batch: rows waiting for a write
	spare    []byte // the buffer of the batch being written, reused
	name     string
	rows     int   // rows written
	pending  int   // rows in buf
	regular  bool  // a regular file: Close syncs it
	repaired int64 // bytes of a torn last line Create removed

	open     uint64 // the batch rows are appended to
	done     uint64 // every batch before this one has been written
	flushing bool   // a writer is writing a batch now (or gathering one)
	err      error  // the first write error: every later Write returns it

	// The commit window (SetCommitWindow): how long the first row of a
	// batch waits for others to join it, while rows come faster than one
	// a window; gap is the mean gap between rows lately, last the time
	// of the last row (-1 before the second), alone how many rows more go without a window
	// after a window gathered no other row.
	window time.Duration
	last   time.Time
	gap    time.Duration
	alone  int
}

// Gathering after a window found no other row: so many rows go at once.
const aloneRows = 64

// SetCommitWindow makes a batch's first row wait up to d for other rows to
// join its write(2) while rows come faster than one every d (0, the
// default, writes at once): fewer writes at thousands of rows a second,
// each row still on file when its Write returns. A window that gathers
// no other row (one writer at a time) is not waited again for the next
// 64 rows. Call it before the first Write.
func (w *Writer) SetCommitWindow(d time.Duration) {
	w.mu.Lock()
	w.window, w.gap = d, -1
	w.mu.Unlock()
}

// gather reports whether a batch, its first row just appended, should
// wait for the window, and notes the row's time.
func (w *Writer) gather() bool {
	if w.window <= 0 {
		return false
	}
	now, last := time.Now(), w.last
	w.last = now
	switch {
	case last.IsZero():
		return false // no gap known yet
	case w.gap < 0:
		w.gap = now.Sub(last)
	default:
		w.gap += (now.Sub(last) - w.gap) / 8
	}
	if w.alone > 0 {
		w.alone--
		return false
	}
	return w.gap < w.window
}

// Create opens path for appending. A new or empty file gets the header; an
// existing file must start with exactly this header, else an error naming
// the file is returned and the file is left untouched. A torn last line
// (no newline: a run killed mid-write) is removed before the first row is
// appended; Repaired says how many bytes that was.
//
// A path that is not a regular file — a pipe such as /dev/stdout, a FIFO,
// a character device such as /dev/null — is opened write-only and gets the
// header: nothing can be read back from it, repaired or synced.
//
// Every error names path once.
func Create(path string) (*Writer, error) {
	// Stat first so that a FIFO is not opened for reading too: a writer
	// that holds a read end would never see its reader go away.
	flag := os.O_RDWR | os.O_CREATE | os.O_APPEND
	if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
		flag = os.O_WRONLY | os.O_APPEND
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fileError("open", path, err)
	}
	w, err := start(f, path, flag&os.O_RDWR != 0)
	if err != nil {
		f.Close()
		return nil, err
	}
	return w, nil
}

// start checks or writes the header of the file f just opened, and
// removes a torn last line.
func start(f *os.File, path string, readable bool) (*Writer, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, fileError("open", path, err)
	}
	w := &Writer{f: f, w: f, name: path, buf: make([]byte, 0, 512), regular: st.Mode().IsRegular()}
	switch {
	case !w.regular || st.Size() == 0:
		if _, err := f.WriteString(header + "\n"); err != nil {
			return nil, fileError("write", path, err)
		}
		return w, nil
	case !readable:
		// Replaced by a regular file between the Stat and the open.
		return nil, fmt.Errorf("open results file %s: it changed while being opened; try again", path)
	}
	if err := checkHeader(f, path, st.Size()); err != nil {
		return nil, err
	}
	if w.repaired, err = dropTornLine(f, path, st.Size()); err != nil {
		return nil, err
	}
	return w, nil
}

// checkHeader reads the first line of f, but only as much as a matching
// header line can take: the first line of a foreign file may be gigabytes
// long.
func checkHeader(f *os.File, path string, size int64) error {
	n := min(size, int64(len(header)+len("\r\n")))
	line, err := bufio.NewReader(io.NewSectionReader(f, 0, n)).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return fileError("read", path, err)
	}
	if got := strings.TrimRight(line, "\r\n"); got != header {
		return fmt.Errorf("%w: %s (its header is %q); choose another file", ErrHeaderMismatch, path, truncate(got, 80))
	}
	return nil
}

// dropTornLine removes what follows the last newline of f, size bytes
// long: a run killed mid-write can leave a partial row, and appending a
// newline after it would complete it into a line that reads as a row. It
// returns how many bytes it removed. A file that is the header alone
// without its newline gets the newline. A last line longer than MaxLine is
// not a torn row but a damaged file: it is refused, and left untouched.
func dropTornLine(f *os.File, path string, size int64) (int64, error) {
	last := make([]byte, 1)
	if _, err := f.ReadAt(last, size-1); err != nil {
		return 0, fileError("read", path, err)
	}
	if last[0] == '\n' {
		return 0, nil
	}
	end, err := lastNewline(f, size)
	switch {
	case errors.Is(err, errLongLastLine):
		return 0, fmt.Errorf("results file %s ends in a line of more than %d bytes without a newline: not a row cut short; choose another file", path, MaxLine)
	case err != nil:
		return 0, fileError("read", path, err)
	case end < 0:
		// The header matched, so the file is the header without its line end.
		if _, err := f.WriteString("\n"); err != nil {
			return 0, fileError("write", path, err)
		}
		return 0, nil
	}
	if err := f.Truncate(end + 1); err != nil {
		return 0, fileError("repair", path, err)
	}
	return size - end - 1, nil
}

// errLongLastLine: the last line of the file runs on for more than MaxLine.
var errLongLastLine = errors.New("last line too long")

// lastNewline returns the offset of the last '\n' of f (size bytes), or -1
// when there is none. It reads back at most MaxLine bytes from the end and
// returns errLongLastLine when the last line is longer.
func lastNewline(f *os.File, size int64) (int64, error) {
	buf := make([]byte, 64<<10)
	for end := size; end > 0; {
		start := max(0, end-int64(len(buf)))
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil {
			return 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			nl := start + int64(i)
			if size-nl-1 > MaxLine {
				return 0, errLongLastLine
			}
			return nl, nil
		}
		if size-start > MaxLine {
			return 0, errLongLastLine
		}
		end = start
	}
	return -1, nil
}

// fileError words a failure on the results file at path, naming the path
// once: an *fs.PathError would name it again.
func fileError(op, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s results file %s: %w", op, path, err)
}

// NewWriter writes rows (and a header) to w, for tests and pipes.
func NewWriter(w io.Writer) (*Writer, error) {
	if _, err := io.WriteString(w, header+"\n"); err != nil {
		return nil, err
	}
	return &Writer{w: w, buf: make([]byte, 0, 512)}, nil
}

// Write appends one row and returns once it is written to the file (or
// its batch failed). It is safe for concurrent use: rows completed while
// another is being written go out together in the next write(2), whole
// lines only. A crash can lose only rows whose Write has not returned.
func (w *Writer) Write(r *Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.written.L == nil {
		w.written.L = &w.mu
	}
	w.buf = appendCSV(w.buf, r)
	w.pending++
	mine := w.open
	wait := w.gather()
	// Group commit: the first writer to find no write in progress writes
	// every row appended so far, its own and those of the writers waiting
	// for it, in one write(2); a writer returns once the batch holding its
	// row is on file. One row alone is one write, as before; rows that
	// complete together share one. With a commit window, the writer first
	// waits for the rows of the window to join (the lock released).
	for w.err == nil && w.done <= mine {
		if w.flushing {
			w.written.Wait()
			continue
		}
		w.flushing = true
		if wait {
			wait = false
			w.mu.Unlock()
			time.Sleep(w.window)
			w.mu.Lock()
			if w.pending == 1 {
				w.alone = aloneRows
			}
		}
		batch, n := w.buf, w.pending
		w.buf, w.spare, w.pending = w.spare[:0], nil, 0
		w.open++
		w.mu.Unlock()
		_, err := w.w.Write(batch)
		w.mu.Lock()
		w.flushing, w.spare = false, batch[:0]
		w.done = w.open
		if err == nil {
			w.rows += n
		} else if w.err == nil {
			if w.name == "" {
				w.err = fmt.Errorf("write results: %w", err)
			} else {
				w.err = fileError("write", w.name, err)
			}
		}
		w.written.Broadcast()
	}
	return w.err
}

// Rows returns how many rows this Writer has written.
func (w *Writer) Rows() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.rows
}

// Repaired returns how many bytes of a torn last line Create removed from
// the file before appending (0 when the file ended with a newline). The
// line was never a complete row; a caller tells the user it was dropped.
func (w *Writer) Repaired() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.repaired
}

// Close syncs a regular file to disk and closes it. A pipe or a device is
// only closed: it cannot be synced.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.f == nil {
		return nil
	}
	var serr error
	if w.regular {
		serr = w.f.Sync()
		if errors.Is(serr, syscall.EINVAL) || errors.Is(serr, syscall.ENOTSUP) {
			serr = nil // a file system that cannot sync: nothing more to do
		}
	}
	cerr := w.f.Close()
	w.f = nil
	if serr != nil {
		return fileError("sync", w.name, serr)
	}
	if cerr != nil {
		return fileError("close", w.name, cerr)
	}
	return nil
}
