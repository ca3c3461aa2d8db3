package timeline

import (
	"fmt"
	"testing"
)

// TestFileOptionsCheck: 0 and every size from MinMaxSize are bounds;
// below it (1 byte short) is an error that says the smallest.
func TestFileOptionsCheck(t *testing.T) {
	for _, c := range []struct {
		max int64
		ok  bool
	}{{0, true}, {MinMaxSize, true}, {DefaultMaxSize, true}, {MinMaxSize - 1, false}, {1, false}} {
		err := FileOptions{MaxSize: c.max}.Check()
		if (err == nil) != c.ok {
			t.Errorf("MaxSize %d: %v", c.max, err)
		}
	}
}

// --max-size 1000 of 'iotap timeline' is too small for a window.
func ExampleFileOptions_Check() {
	fmt.Println(FileOptions{Out: "all.pftrace", MaxSize: 1000}.Check())
	fmt.Println(FileOptions{Out: "all.pftrace", MaxSize: DefaultMaxSize}.Check())
	// Output:
	// --max-size 1000: at least 65536 bytes (or 0 for one file)
	// <nil>
}
