package cut

import (
	"errors"
	"io"
	"syscall"
)

// BrokenPipe returns w whose writes, when one fails with EPIPE (the
// reader of the pipe w writes to has gone: 'iotap mmio read --from 1s
// big.log | head -1'), remove the cuts of ws and then call broken, before
// the error is returned. broken may end the process as the signal would
// (iotap exits with status 141): the cuts are gone by then.
//
// A Go program is killed by a write to a closed pipe on its standard
// output or error before the write returns, leaving the cuts behind,
// unless it has asked for SIGPIPE with signal.Notify; asking is the
// program's choice, as is exiting. The package does neither.
func (ws *Windows) BrokenPipe(w io.Writer, broken func()) io.Writer {
	return &pipeWriter{w: w, ws: ws, broken: broken}
}

type pipeWriter struct {
	w      io.Writer
	ws     *Windows
	broken func()
}

func (p *pipeWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	if errors.Is(err, syscall.EPIPE) {
		p.ws.Close()
		p.broken()
	}
	return n, err
}
