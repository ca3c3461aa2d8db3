package main

import (
	"errors"
	"strconv"

	"github.com/spf13/pflag"
)

// workersValue is a --workers value: a count of goroutines, 0 for the
// command's own choice. A negative count is refused as the flag is
// parsed (exit 2: "invalid argument "-2" for "--workers" flag: ..."), the
// same in every command that has the flag.
type workersValue struct{ n *int }

func (v workersValue) String() string { return strconv.Itoa(*v.n) }
func (v workersValue) Type() string   { return "int" }

func (v workersValue) Set(s string) error {
	n, err := strconv.ParseInt(s, 0, strconv.IntSize)
	if err != nil {
		return err
	}
	if n < 0 {
		return errNegativeWorkers
	}
	*v.n = int(n)
	return nil
}

// errNegativeWorkers is the error of a negative --workers.
var errNegativeWorkers = errors.New("want 0 (automatic) or more")

// workersVar defines the --workers flag of a command on fs, stored in n
// (0 by default); usage says what 0 chooses.
func workersVar(fs *pflag.FlagSet, n *int, usage string) {
	*n = 0
	fs.Var(workersValue{n}, "workers", usage)
}
