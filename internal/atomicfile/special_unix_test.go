//go:build unix

package atomicfile

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A name that is not a regular file is written through, not replaced:
// before, `ptuprobe fit -o /dev/null` run as root renamed a regular file
// over /dev/null. A named pipe stands for the device here (a test that
// failed on /dev/null itself would break the machine it ran on).
func TestWriteThroughANamedPipe(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	// Open the reading end first, without blocking, so that Write's open
	// for writing finds a reader; the few bytes fit the pipe's buffer.
	fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := os.NewFile(uintptr(fd), path)
	defer r.Close()
	if err := Write(path, func(w io.Writer) error { _, err := io.WriteString(w, "profile\n"); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("%s is now %v, not a named pipe: Write replaced it", path, st.Mode())
	}
	buf := make([]byte, 64)
	n, _ := r.Read(buf)
	if got := string(buf[:n]); got != "profile\n" {
		t.Fatalf("read %q through the pipe", got)
	}
	if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

// A symbolic link keeps pointing where it did; the file it names gets
// the content.
func TestWriteKeepsASymlink(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "twin.json")
	link := filepath.Join(dir, "latest.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("twin.json", link); err != nil {
		t.Skipf("symlink: %v", err)
	}
	if err := Write(link, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	st, err := os.Lstat(link)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is now %v, not a link: Write replaced it", link, st.Mode())
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("the linked file holds %q", b)
	}
}

func TestWriteRefusesADirectory(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := Write(dir, func(w io.Writer) error { return nil }); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		t.Fatalf("the directory is gone: %v", err)
	}
}
