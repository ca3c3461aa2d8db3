package outfile

import (
	"fmt"
	"io"
	"strings"
)

// Set is the output files of one job: a file created through it and not
// committed when the job ends is removed by Abort, so a failed job leaves
// no partial or complete-looking output.
type Set struct {
	files []*File
}

// Create is Create, the file kept in the set.
func (s *Set) Create(path string, opt Options) (*File, error) {
	f, err := Create(path, opt)
	if err != nil {
		return nil, err
	}
	s.files = append(s.files, f)
	return f, nil
}

// Abort removes the files of the set that were not committed, and empties
// the set.
func (s *Set) Abort() {
	for _, f := range s.files {
		f.Abort()
	}
	s.files = nil
}

// Wrote says what the set wrote, for the message of an interrupted job
// (committed files are complete, holding what was read before the
// interruption), with others (files written by other means) after them:
// ": wrote NAME (N bytes, complete up to the interruption), ...", or
// ": nothing written" when the job's first output is a file that was not
// committed; "" when there is nothing to say (output to stdout).
func (s *Set) Wrote(others ...string) string {
	var wrote []string
	for _, f := range s.files {
		if f.Committed() && f.Name() != "-" {
			wrote = append(wrote, fmt.Sprintf("%s (%d bytes, complete up to the interruption)", f.Name(), f.Written()))
		}
	}
	wrote = append(wrote, others...)
	switch {
	case len(wrote) > 0:
		return ": wrote " + strings.Join(wrote, ", ")
	case len(s.files) > 0 && s.files[0].Name() != "-":
		return ": nothing written"
	}
	return ""
}

// Creator returns a function creating files through s with opt, the
// Create of the capture functions (usbmon.FileOptions, rotate.Options, ...):
// the writer it returns commits its file on Close, and removes it on
// Abort (a file with nothing recorded).
func (s *Set) Creator(opt Options) func(path string) (io.WriteCloser, error) {
	return func(path string) (io.WriteCloser, error) {
		f, err := s.Create(path, opt)
		if err != nil {
			return nil, err
		}
		return committer{f}, nil
	}
}

// committer is a File whose Close commits it.
type committer struct{ f *File }

func (c committer) Write(p []byte) (int, error) { return c.f.Write(p) }
func (c committer) Close() error                { return c.f.Commit() }
func (c committer) Abort() error                { return c.f.Abort() }
