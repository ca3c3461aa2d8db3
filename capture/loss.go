package capture

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/iotap/iotap/internal/outfile"
)

// LossFile is the file of a capture directory that records what the
// capture lost, as the kernel reported it while capturing (usbmon drops,
// mmiotrace lost events and ring overruns, user_events lost or
// undecodable records): counts the traces themselves may not hold.
// Run writes it only when something was lost; iotap export puts it in
// the captures table.
const LossFile = "loss.json"

// SourceLoss is what one source of a capture lost.
type SourceLoss struct {
	// Source is "usb", "mmio" or "events".
	Source string `json:"source"`
	// Lost counts the events lost.
	Lost uint64 `json:"lost_events"`
	// Text says it in words ("usb: 3 events dropped by the kernel").
	Text string `json:"loss"`
}

// lossFile is the content of LossFile.
type lossFile struct {
	Version int          `json:"version"`
	Sources []SourceLoss `json:"sources"`
}

// WriteLoss writes LossFile in dir (mode 0600, not over an existing
// file). Its JSON is indented: a one-line JSON object would read as a
// user_events NDJSON trace.
func WriteLoss(dir string, loss []SourceLoss) error {
	b, err := json.MarshalIndent(lossFile{Version: 1, Sources: loss}, "", "  ")
	if err != nil {
		return err
	}
	f, err := outfile.Create(filepath.Join(dir, LossFile), outfile.Options{Mode: outfile.Exclusive})
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}

// ReadLoss reads LossFile in dir: nil without one (nothing was lost, or
// a capture directory older than the file).
func ReadLoss(dir string) ([]SourceLoss, error) {
	b, err := os.ReadFile(filepath.Join(dir, LossFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var lf lossFile
	if err := json.Unmarshal(b, &lf); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, LossFile), err)
	}
	if lf.Version != 1 {
		return nil, fmt.Errorf("%s: version %d (this iotap reads 1)", filepath.Join(dir, LossFile), lf.Version)
	}
	return lf.Sources, nil
}

// LossError reports a capture that ran to its end but lost data (iotap
// exits 3 on it): Loss says what, Remedy how to lose less or to accept
// the loss.
type LossError struct {
	Loss   string // "capture: usb: 3 events dropped by the kernel"
	Remedy string // follows Loss in Error, with its separator: " (use --allow-loss to accept)"
}

func (e *LossError) Error() string { return e.Loss + e.Remedy }

// EndLoss ends a capture that lost what loss says ("": nothing). When the
// loss is allowed it is still said, through warn (nil: not said), and
// EndLoss returns nil; otherwise it returns a *LossError.
func EndLoss(loss, remedy string, allow bool, warn func(string)) error {
	switch {
	case loss == "":
		return nil
	case allow:
		if warn != nil {
			warn(loss)
		}
		return nil
	}
	return &LossError{Loss: loss, Remedy: remedy}
}
