package outfile

import "io"

// Counter is a Writer that passes what it is given to W and counts the
// bytes W took (the size of an output written so far).
type Counter struct {
	W io.Writer
	N int64
}

func (c *Counter) Write(p []byte) (int, error) {
	n, err := c.W.Write(p)
	c.N += int64(n)
	return n, err
}

// Creator returns the function that the jobs writing several files take
// as their Create hook (timeline.FileOptions, report.FileOptions,
// cut.WriteIndexFile): it creates path as Create does in Atomic mode,
// never over one of inputs ("-" is stdout, os.Stdout when nil), and
// returns the file and its commit, which removes the file when it fails.
// The writer is a *File: its Abort removes it unfinished.
func Creator(stdout io.Writer) func(path string, inputs []string) (io.Writer, func() error, error) {
	return func(path string, inputs []string) (io.Writer, func() error, error) {
		var in Inputs
		in.Add(inputs...)
		f, err := Create(path, Options{Inputs: &in, Mode: Atomic, Stdout: stdout})
		if err != nil {
			return nil, nil, err
		}
		return f, func() error {
			if err := f.Commit(); err != nil {
				f.Abort()
				return err
			}
			return nil
		}, nil
	}
}
