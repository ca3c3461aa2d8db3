package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/iotap/iotap/cut"
	"github.com/iotap/iotap/internal/outfile"
)

// WriteIndexes writes, beside each trace file of the capture directory
// dir (USBFile, MMIOFile, EventsFile), its index FILE.iotapidx (package
// cut: what 'iotap index FILE' writes), so that cut, timeline --from/--to
// and mark: lookups seek into the capture instead of reading it from the
// start. Files that are absent or empty are skipped. It reads each file
// once. Run does not need it: it indexes each trace as it records it.
func WriteIndexes(ctx context.Context, dir string) error {
	var errs []error
	for _, name := range []string{USBFile, MMIOFile, EventsFile} {
		path := filepath.Join(dir, name)
		fi, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) || (err == nil && fi.Size() == 0) {
			continue
		}
		if err == nil {
			err = writeIndex(ctx, path)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: index: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// indexWhileRecording wraps the trace file f, at path, of format fmt so
// that its index is written as it records (cut.IndexWriter: a partial
// index every few MB, so that a capture killed mid-way leaves an index
// of what it wrote). Write the trace to w; finish closes f and writes the
// complete index (reading the file once more, as WriteIndexes does, when
// the incremental one failed).
func indexWhileRecording(f *os.File, path string, format cut.Format, logf func(string, ...any)) (w io.Writer, finish func() error) {
	iw, err := cut.NewIndexWriter(f, path, format, cut.IndexWriterOptions{})
	if err != nil {
		return f, f.Close
	}
	return iw, func() error {
		cerr := f.Close()
		if err := iw.Close(); err != nil {
			logf("warning: %v; indexing the finished file", err)
			if err := writeIndex(context.Background(), path); err != nil {
				logf("warning: %s: index: %v (the trace is complete; 'iotap index FILE' writes it)", filepath.Base(path), err)
			}
		}
		return cerr
	}
}

func writeIndex(ctx context.Context, path string) error {
	in, closer, err := cut.OpenFile(path, false, nil)
	if err != nil {
		return err
	}
	defer closer.Close()
	ix, err := cut.BuildIndex(ctx, in, cut.DefaultInterval)
	if err != nil {
		return err
	}
	b, err := ix.MarshalBinary()
	if err != nil {
		return err
	}
	var ins outfile.Inputs
	ins.Add(path)
	return outfile.WriteFile(path+cut.IndexSuffix, b, outfile.Options{Inputs: &ins})
}
