package progress_test

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/iotap/iotap/internal/progress"
)

func Example() {
	in := strings.NewReader(strings.Repeat("record\n", 1000))
	// A job of known size, shown on stderr after 2 s (this one is over
	// long before: nothing is printed).
	m := progress.New(os.Stderr, "iotap: decode", in.Size(), progress.Options{Terminal: true})
	n, _ := io.Copy(io.Discard, m.Reader(in))
	m.Done()
	fmt.Println(n, "bytes")
	fmt.Println(progress.Line("iotap: decode", 120e6, 480e6, 2*time.Second, ""))
	// Output:
	// 7000 bytes
	// iotap: decode: 25% 120.0 MB of 480.0 MB, 60.0 MB/s, 6s left
}

// Without --progress, a job printing its records on a terminal shows no
// meter on the same terminal; --progress shows it anyway.
func ExampleChoice_Shown() {
	fmt.Println(progress.Choice{}.Shown(true, true, true))
	fmt.Println(progress.Choice{}.Shown(true, true, false))
	fmt.Println(progress.Choice{Set: true, On: true}.Shown(false, false, true))
	// Output:
	// false
	// true
	// true
}
