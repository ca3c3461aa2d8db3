package timeline

import "fmt"

// Check checks o.MaxSize before anything is read: 0 (one file) or at
// least MinMaxSize, which ExportSplit needs to hold a window. The error
// names --max-size, as 'iotap timeline' and 'iotap report' take it.
func (o FileOptions) Check() error {
	if o.MaxSize != 0 && o.MaxSize < MinMaxSize {
		return fmt.Errorf("--max-size %d: at least %d bytes (or 0 for one file)", o.MaxSize, MinMaxSize)
	}
	return nil
}
