package tracefs_test

import (
	"fmt"

	"github.com/iotap/iotap/tracefs"
)

// Paths below the root are built with Path, which refuses traversal, so an
// event name from the command line cannot reach another file.
func ExampleFS_Path() {
	fs := tracefs.New("/sys/kernel/tracing")
	p, err := fs.Path("events", "user_events", "my_event", "enable")
	fmt.Println(p, err)
	_, err = fs.Path("events", "../../../etc/shadow")
	fmt.Println(err)
	// Output:
	// /sys/kernel/tracing/events/user_events/my_event/enable <nil>
	// tracefs: path outside tracefs: "../../../etc/shadow"
}
