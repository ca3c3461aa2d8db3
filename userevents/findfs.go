package userevents

import "github.com/iotap/iotap/tracefs"

// findFS is fs, or when it is nil the tracefs mount of this system
// (tracefs.Find): the jobs of the events commands take a nil FS.
func findFS(fs *tracefs.FS) (*tracefs.FS, error) {
	if fs != nil {
		return fs, nil
	}
	return tracefs.Find()
}
