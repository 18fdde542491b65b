//go:build linux

package resident

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

var sink int // the pages read, kept so that the reads are not optimised away

// rssFileKB is this process's resident file pages (RssFile), in KiB.
func rssFileKB(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "RssFile:"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skip("no RssFile in /proc/self/status")
	return 0
}

// A file mapped and read whole leaves the resident set once dropped, its
// contents unchanged; a mapping of another folder's file stays.
func TestDropMapped(t *testing.T) {
	const size = 64 << 20
	dir, other := t.TempDir(), t.TempDir()
	mapRead := func(path string) []byte {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i % 251)
		}
		m := mapFile(t, path, data)
		touch(m)
		return m
	}
	m := mapRead(filepath.Join(dir, "000001.sst"))
	keep := mapRead(filepath.Join(other, "000002.sst"))
	before := rssFileKB(t)
	n, err := DropMapped(dir, ".sst")
	if err != nil {
		t.Fatal(err)
	}
	if n != size {
		t.Fatalf("advised %d bytes, want %d", n, size)
	}
	after := rssFileKB(t)
	if before-after < size/1024*3/4 {
		t.Errorf("RssFile %d -> %d KiB: the mapping's pages did not leave the resident set", before, after)
	}
	if before-after > size/1024*5/4 {
		t.Errorf("RssFile %d -> %d KiB: more than the folder's mapping left (the other folder's too?)", before, after)
	}
	for i := 0; i < size; i += 4093 {
		if m[i] != byte(i%251) || keep[i] != byte(i%251) {
			t.Fatalf("byte %d changed after the drop", i)
		}
	}
	if n, err := DropMapped(dir, ".vlog"); err != nil || n != 0 {
		t.Errorf("a suffix no mapping has: %d bytes, %v", n, err)
	}
}

// DropMappedWhile drops the folder's mapped pages at each tick while the
// load goes on, and once more when stopped.
func TestDropMappedWhile(t *testing.T) {
	const size = 64 << 20
	dir := t.TempDir()
	path := filepath.Join(dir, "000001.sst")
	m := mapFile(t, path, make([]byte, size))
	read := func() { touch(m) }
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	// Ticking: the pages read leave without a stop.
	read()
	before := rssFileKB(t)
	stop := DropMappedWhile(log, dir, 10*time.Millisecond, ".sst")
	deadline := time.Now().Add(5 * time.Second)
	for before-rssFileKB(t) < size/1024*3/4 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if after := rssFileKB(t); before-after < size/1024*3/4 {
		t.Errorf("RssFile %d -> %d KiB while ticking: the pages stayed", before, after)
	}
	stop()
	stop() // a second stop is harmless
	// Stopped before its first tick: the stop drops once more.
	read()
	before = rssFileKB(t)
	DropMappedWhile(log, dir, time.Hour, ".sst")()
	if after := rssFileKB(t); before-after < size/1024*3/4 {
		t.Errorf("RssFile %d -> %d KiB after stop: the last drop did not run", before, after)
	}
}

// mapFile writes data to path and maps the file read-only and shared,
// unmapped when the test ends.
func mapFile(t *testing.T, path string, data []byte) []byte {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := unix.Mmap(int(f.Fd()), 0, len(data), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Munmap(m) })
	return m
}

// touch reads a byte of every page of m, so that its pages are resident.
func touch(m []byte) {
	for i := 0; i < len(m); i += 4096 {
		sink += int(m[i])
	}
}
