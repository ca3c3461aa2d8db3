package calls

import (
	"errors"
	"io/fs"
	"path/filepath"
)

// inputError is an error about the input at path whose message names it:
// "path: " before the error (nameInput), or the error's own message where
// that names the input already (named).
type inputError struct {
	path, msg string
	err       error
}

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return e.err }

// named marks err, whose message names the input at path, as naming it
// (nil stays nil).
func named(err error, path string) error {
	if err == nil {
		return nil
	}
	return &inputError{path: path, msg: err.Error(), err: err}
}

// nameInput returns err naming the input at path: as it is where it names
// it already (namesInput), else with "path: " before it. nil stays nil.
func nameInput(err error, path string) error {
	if err == nil || namesInput(err, path) {
		return err
	}
	return &inputError{path: path, msg: path + ": " + err.Error(), err: err}
}

// namesInput says whether err names the input at path by what it is, not
// by whether path shows in its message (a short name, x, shows in
// "offset 0x0"): an *inputError of path, or an *fs.PathError of path or
// of a file in it (a capture directory's capture.json).
func namesInput(err error, path string) bool {
	var ie *inputError
	if errors.As(err, &ie) && ie.path == path {
		return true
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return false
	}
	if pe.Path == path {
		return true
	}
	rel, rerr := filepath.Rel(path, pe.Path)
	return rerr == nil && filepath.IsLocal(rel)
}
