package unix

import (
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// WaitingForFIFO reports whether a thread of this process sleeps in an
// open(2) of a named pipe, waiting for the other end ("wait_for_partner"
// in /proc/self/task/*/wchan; false where the kernel does not say).
func WaitingForFIFO() bool {
	tasks, _ := filepath.Glob("/proc/self/task/*/wchan")
	for _, t := range tasks {
		if b, err := os.ReadFile(t); err == nil && string(b) == "wait_for_partner" {
			return true
		}
	}
	return false
}

// WakeFIFO ends the wait of an open(2) of the named pipe at path that is
// blocked for want of the other end (an open for reading waits for a
// writer, one for writing for a reader): it opens both ends without
// blocking (O_NONBLOCK; the write end only opens when there is a reader)
// and closes them at once. A reader woken so reads the end of its input,
// a writer a closed pipe. It does nothing to a path that is not a named
// pipe, and reports whether path is one.
func WakeFIFO(path string) bool {
	r, err := unix.Open(path, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(r)
	var st unix.Stat_t
	if unix.Fstat(r, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		return false
	}
	if w, err := unix.Open(path, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(w)
	}
	return true
}
