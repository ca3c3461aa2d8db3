//go:build !linux

package userevents

import (
	"context"
	"fmt"
	"io"
)

// RecordLines needs Linux's user_events: elsewhere it returns
// ErrNotSupported.
func RecordLines(ctx context.Context, w io.Writer, opt RecordLinesOptions) (RecordLinesResult, error) {
	return RecordLinesResult{}, fmt.Errorf("%w: recording user events needs Linux", ErrNotSupported)
}
