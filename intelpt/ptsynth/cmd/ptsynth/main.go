//go:build linux

// Command ptsynth writes the perf.data of a synthesized Intel PT trace of
// the calls test program (intelpt/testdata/calls/prog.c, built with gcc
// into the output directory): ptsynth -o DIR [-psb N]. It writes
// DIR/prog, DIR/perf.data and DIR/truth.txt (one instruction address per
// line, the run's true instruction sequence). A test tool: not part of
// the iotap binary.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/iotap/iotap/intelpt/ptsynth"
)

func main() {
	out := flag.String("o", "", "output directory")
	psb := flag.Int("psb", 256, "PSB period in bytes")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "usage: ptsynth -o DIR [-psb N]")
		os.Exit(2)
	}
	if err := run(*out, *psb); err != nil {
		fmt.Fprintln(os.Stderr, "ptsynth:", err)
		os.Exit(1)
	}
}

func run(dir string, psb int) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	s, err := ptsynth.SynthesizeProg(dir, psb)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "perf.data"), s.Perf, 0o600); err != nil {
		return err
	}
	f, err := os.OpenFile(filepath.Join(dir, "truth.txt"), os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var line []byte
	for _, st := range s.Run.Steps {
		line = strconv.AppendUint(line[:0], st.IP, 16)
		w.Write(append(line, '\n'))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	fmt.Printf("%d instructions, %d bytes of trace\n", len(s.Run.Steps), len(s.Enc.PT))
	return f.Close()
}
