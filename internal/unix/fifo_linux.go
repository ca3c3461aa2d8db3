package unix

import "golang.org/x/sys/unix"

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
