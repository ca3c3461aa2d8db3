package outfile_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/iotap/iotap/internal/outfile"
)

func Example() {
	dir, _ := os.MkdirTemp("", "outfile")
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "a.pcapng")
	os.WriteFile(in, []byte("capture"), 0o600)

	var inputs outfile.Inputs
	inputs.Add(in)

	// Writing over the input is refused, whatever the path says.
	_, err := outfile.Create(filepath.Join(dir, ".", "a.pcapng"), outfile.Options{Inputs: &inputs})
	fmt.Println(errors.Is(err, outfile.ErrSameFile))

	f, err := outfile.Create(filepath.Join(dir, "a.1u"), outfile.Options{Inputs: &inputs})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Abort() // removes the temporary file on an early return
	fmt.Fprintln(f, "converted")
	if err := f.Commit(); err != nil {
		fmt.Println(err)
		return
	}
	fi, _ := os.Stat(filepath.Join(dir, "a.1u"))
	fmt.Printf("%v\n", fi.Mode().Perm())
	// Output:
	// true
	// -rw-------
}

// A job writes two files and fails before committing the second: Abort
// removes it, and Wrote says what the job left.
func ExampleSet() {
	dir, _ := os.MkdirTemp("", "outfile")
	defer os.RemoveAll(dir)
	var outputs outfile.Set
	a, _ := outputs.Create(filepath.Join(dir, "a.txt"), outfile.Options{})
	a.Write([]byte("done\n"))
	a.Commit()
	b, _ := outputs.Create(filepath.Join(dir, "b.txt"), outfile.Options{})
	b.Write([]byte("half"))
	outputs.Abort()
	_, err := os.Stat(filepath.Join(dir, "b.txt"))
	fmt.Println(errors.Is(err, os.ErrNotExist))
	fmt.Println(outputs.Wrote() == "") // the set is empty after Abort
	// Output:
	// true
	// true
}

// The files of a capture's ring, created through a Set: each is committed
// when the capture closes it.
func ExampleSet_Creator() {
	dir, _ := os.MkdirTemp("", "outfile")
	defer os.RemoveAll(dir)
	var outputs outfile.Set
	create := outputs.Creator(outfile.Options{Mode: outfile.InPlace})
	w, _ := create(filepath.Join(dir, "x_00001.pcapng"))
	fmt.Fprint(w, "events")
	w.Close()
	outputs.Abort() // nothing left to abort
	b, _ := os.ReadFile(filepath.Join(dir, "x_00001.pcapng"))
	fmt.Println(string(b))
	// Output: events
}
