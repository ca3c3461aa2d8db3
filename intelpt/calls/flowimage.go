package calls

import (
	"fmt"
	"strings"

	"github.com/iotap/iotap/intelpt"
)

// FlowImage is the memory image for an instruction listing (`iotap pt
// flow`) of stream i of in: the files of the mappings of the process
// that ran it, as the sideband says, found with o.Finder, plus o.Kernel.
// A per-thread stream is its thread's process; a per-CPU stream the one
// process that its context switch records show, or pid when it is not
// 0 (a listing follows one address space: code of other processes on
// that CPU shows as decode errors; Analyze switches between them).
func FlowImage(in *Input, i int, pid int32, o Options) (*intelpt.Image, []intelpt.Unfound, error) {
	if i < 0 || i >= len(in.Streams) {
		return nil, nil, fmt.Errorf("calls: no stream %d (the input has %d)", i, len(in.Streams))
	}
	s := in.Streams[i]
	if pid == 0 {
		if s.CPU < 0 || s.TID > 0 {
			for _, r := range in.Sideband.Records {
				if r.TID == s.TID && r.PID > 0 {
					pid = r.PID
					break
				}
			}
			if pid == 0 {
				pid = s.TID
			}
		} else {
			seen := map[int32]bool{}
			var pids []string
			for _, r := range in.Sideband.Records {
				p := int32(-1)
				switch {
				case r.CPU != s.CPU:
				case r.Type == intelpt.PerfRecordItraceStart, r.Type == intelpt.PerfRecordSwitch && !r.SwitchOut():
					p = r.PID
				case r.Type == intelpt.PerfRecordSwitchCPUWide && r.SwitchOut():
					p = r.NextPrevPID
				}
				if p > 0 && !seen[p] {
					seen[p] = true
					pid = p
					pids = append(pids, fmt.Sprint(p))
				}
			}
			switch {
			case len(pids) == 0:
				return nil, nil, fmt.Errorf("calls: the trace of cpu %d has no context switch records: give the process (--pid)", s.CPU)
			case len(pids) > 1:
				return nil, nil, fmt.Errorf("calls: processes %s ran on cpu %d: give the one to list (--pid; pt calls follows all of them)", strings.Join(pids, ", "), s.CPU)
			}
		}
	}
	p := in.Sideband.AddressSpaces().Process(pid)
	if p == nil {
		return nil, nil, fmt.Errorf("calls: the sideband has no mappings of process %d", pid)
	}
	im, unfound, _ := p.LoadImage(&o.Finder)
	if o.Kernel != nil {
		if err := o.Kernel.AddTo(im); err != nil {
			return nil, nil, err
		}
	}
	return im, unfound, nil
}
