package intelpt

import (
	"fmt"
	"io"
	"os"
	"os/exec"
)

// gatedCommand is a command started under /bin/sh that waits on a pipe
// before it execs args: a per-thread perf event with enable_on_exec can be
// opened on its pid first, so tracing starts exactly at the exec.
type gatedCommand struct {
	cmd      *exec.Cmd
	gate     *os.File // write end: a line releases the command
	released bool
}

// startGated starts args held before their exec.
func startGated(args []string, stdin io.Reader, stdout, stderr io.Writer) (*gatedCommand, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", `read _ <&3; exec 3<&-; exec "$@"`, "sh"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	cmd.ExtraFiles = []*os.File{r}
	err = cmd.Start()
	r.Close()
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("starting %s: %w", args[0], err)
	}
	return &gatedCommand{cmd: cmd, gate: w}, nil
}

// pid is the command's process id (the shell's, then, after the exec,
// the command's).
func (g *gatedCommand) pid() int { return g.cmd.Process.Pid }

// release lets the command exec; the channel delivers its exit.
func (g *gatedCommand) release() <-chan error {
	g.released = true
	g.gate.Write([]byte("go\n"))
	g.gate.Close()
	done := make(chan error, 1)
	go func() { done <- g.cmd.Wait() }()
	return done
}

// abort kills a command that was never released, before its exec.
func (g *gatedCommand) abort() {
	if g.released {
		return
	}
	g.released = true
	// Killed before the gate closes: the shell, seeing end of file,
	// would exec the command.
	g.cmd.Process.Kill()
	g.cmd.Wait()
	g.gate.Close()
}
