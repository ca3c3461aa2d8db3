package mmiotrace

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/ksym"
)

// ReadOptions are the options of ReadLog: 'iotap mmio read' behind its
// flags.
type ReadOptions struct {
	// JSON writes NDJSON (an "input" record naming File and Format, then
	// NDJSONEncoder's records), else the kernel's text format; with
	// Symbols, the function of each PC (Formatter).
	JSON         bool
	Symbols      *ksym.Table
	File, Format string
	// Keep selects the records written (nil: all; e.g. regdb.ParseFilter's
	// -Y); Count stops after Count records written (0: no limit).
	Keep  func(*Record) bool
	Count uint64
	// Check writes only the summary of the log (CountKinds, WriteCounts).
	Check bool
	// KeepGoing skips bad lines (counted in the loss) instead of failing.
	KeepGoing bool
	// Workers and Size are ConvertOptions': parsing goroutines (0:
	// chosen by the size of the input; negative: an *ArgError of ReadLog,
	// before anything is written), the input's size (<= 0: unknown).
	Workers int
	Size    int64
	// Path, when not "" or "-" (standard input), is the log's file:
	// ReadLog maps it into memory instead of reading in when it is a
	// regular file and Progress is nil (ConvertOptions.File; Open for the
	// jobs that read record by record: Check, Keep, Count). A pipe, a FIFO
	// or a terminal is read through in.
	Path string
	// Progress, when set, is given the bytes of in read so far, as they
	// are read (a progress meter); the log is then read through in, not
	// mapped.
	Progress func(read int64)
}

// mapped is the file ReadLog maps, "" when it reads in (ReadOptions.Path).
func (o *ReadOptions) mapped() string {
	if o.Path == "" || o.Path == "-" || o.Progress != nil {
		return ""
	}
	if st, err := os.Stat(o.Path); err != nil || !st.Mode().IsRegular() {
		return ""
	}
	return o.Path
}

// progressReader gives the bytes read through it to progress.
type progressReader struct {
	r        io.Reader
	read     int64
	progress func(int64)
}

func (p *progressReader) Read(b []byte) (int, error) {
	n, err := p.r.Read(b)
	if n > 0 {
		p.read += int64(n)
		p.progress(p.read)
	}
	return n, err
}

// ReadLog reads the log in (plain or compressed) and writes to w what
// 'iotap mmio read' writes for opt: every record, those Keep selects, the
// first Count, or the Check summary. A whole log (no Keep, Count or
// Check) is converted by ConvertLog, on several goroutines when it pays;
// the other jobs read record by record (CopyRecords). It returns what the
// read lost (LossMessages: lost events, skipped lines, a cut log) and the
// first error, which names opt.File when it is a bad line
// (NamedFormatError). On an error or when ctx is cancelled, w holds the
// records before it.
func ReadLog(ctx context.Context, in io.Reader, w io.Writer, opt ReadOptions) ([]string, error) {
	if err := checkWorkers("ReadOptions", opt.Workers); err != nil {
		return nil, err
	}
	lost, err := readLog(ctx, in, w, opt)
	return lost, NamedFormatError(opt.File, err)
}

// NamedFormatError names file in err when err is a bad line of the log
// (ErrFormat: "FILE: mmiotrace: line N: ..."), as the readers' other
// errors name it; other errors, and any when file is "", are returned as
// they are.
func NamedFormatError(file string, err error) error {
	if file == "" || !errors.Is(err, ErrFormat) {
		return err
	}
	return fmt.Errorf("%s: %w", file, err)
}

func readLog(ctx context.Context, in io.Reader, w io.Writer, opt ReadOptions) ([]string, error) {
	format := Formatter(opt.JSON, opt.Symbols)
	path := opt.mapped()
	if opt.Progress != nil {
		in = &progressReader{r: in, progress: opt.Progress}
	}
	input := func() error {
		if !opt.JSON {
			return nil
		}
		_, err := w.Write(AppendNDJSONInput(nil, opt.File, opt.Format))
		return err
	}
	if !opt.Check && opt.Keep == nil && opt.Count == 0 {
		if err := input(); err != nil {
			return nil, err
		}
		copt := ConvertOptions{Workers: opt.Workers, KeepGoing: opt.KeepGoing,
			Size: max(opt.Size, 0), AccessNDJSON: opt.JSON && opt.Symbols == nil}
		if path != "" {
			// A plain log is mapped and converted in place.
			if f, err := os.Open(path); err == nil {
				defer f.Close()
				copt.File = f
			}
		}
		st, err := ConvertLog(ctx, in, w, format, copt)
		if err != nil {
			return nil, err
		}
		return st.Loss(), nil
	}
	var rd *Reader
	if path != "" {
		var err error
		if rd, err = Open(path); err != nil {
			return nil, err
		}
		rd.DropBehind() // memory flat in the log's size
	} else {
		rd = NewReader(in)
	}
	defer rd.Close()
	rd.SetKeepGoing(opt.KeepGoing)
	if opt.Check {
		counts, err := CountKinds(rd)
		if err != nil {
			return nil, err
		}
		WriteCounts(w, rd, counts)
		return rd.Loss(), nil
	}
	if err := input(); err != nil {
		return nil, err
	}
	_, err := CopyRecords(ctx, rd, w, format, CopyOptions{Keep: opt.Keep, Count: opt.Count})
	return rd.Loss(), err
}
