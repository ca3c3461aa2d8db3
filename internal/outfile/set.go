package outfile

import (
	"fmt"
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
