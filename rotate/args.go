package rotate

import (
	"errors"
	"fmt"
	"time"
)

// Args are the output habits of the capture commands in the form their
// flags give them (the field comments name the flags); Options checks
// them, and its errors name the flags.
type Args struct {
	Ring         int           // --ring: the newest files kept (0: all)
	FileSize     string        // --file-size: bytes per file, K or M suffix (ParseSize)
	FileDuration time.Duration // --file-duration: time per file
	Interval     time.Duration // --interval: counts printed every Interval (0: none)
}

// Options returns the ring of files named after path that a asks for, or
// nil when neither FileSize nor FileDuration asks for one.
func (a Args) Options(path string) (*Options, error) {
	if a.FileSize == "" && a.FileDuration <= 0 {
		if a.Ring != 0 {
			return nil, fmt.Errorf("--ring %d needs --file-size or --file-duration", a.Ring)
		}
		return nil, nil
	}
	opt := &Options{Path: path, Files: a.Ring, Duration: a.FileDuration}
	if a.FileSize != "" {
		n, err := ParseSize(a.FileSize)
		if err != nil {
			return nil, fmt.Errorf("--file-size: %v", err)
		}
		opt.Size = int64(n)
	}
	if opt.Check() != nil {
		return nil, errors.New("--file-size/--file-duration write files: give -o FILE (and --ring N >= 0)")
	}
	return opt, nil
}
