package userevents

import (
	"fmt"
	"time"

	"github.com/iotap/iotap/tracefs"
)

// RegisterRequest is 'iotap events register NAME FIELDS': the event's
// command, registered persistent unless NoPersist.
type RegisterRequest struct {
	Command     string // 'NAME FIELDS' (ParseCommand)
	NoPersist   bool   // without the persist flag: gone when nothing uses it
	MultiFormat bool   // other formats may share the name (Linux 6.10+)
	schema      *Schema
}

// Check parses Command without the kernel: an *ArgError ("register")
// when it does not parse.
func (r *RegisterRequest) Check() error {
	s, err := ParseCommand(r.Command)
	if err != nil {
		return &ArgError{"register", err}
	}
	r.schema = s
	return nil
}

// Registered is an event registered by RegisterRequest.Register: its
// fields, the tracepoint it got and the flags the kernel kept.
type Registered struct {
	Schema       *Schema
	System, Name string
	Flags        Flags
}

// Register registers the event on fs (RegisterFS; nil: tracefs.Find),
// Check first when it has not been called.
func (r *RegisterRequest) Register(fs *tracefs.FS) (Registered, error) {
	if r.schema == nil {
		if err := r.Check(); err != nil {
			return Registered{}, err
		}
	}
	fs, err := findFS(fs)
	if err != nil {
		return Registered{}, err
	}
	var flags Flags
	if !r.NoPersist {
		flags |= Persist
	}
	if r.MultiFormat {
		flags |= MultiFormat
	}
	sys, name, got, err := RegisterFS(fs, r.schema, flags)
	return Registered{Schema: r.schema, System: sys, Name: name, Flags: got}, err
}

// String is the line 'iotap events register' prints: the event, its
// tracepoint, and when the kernel did not keep Persist, that it is not
// persistent.
func (r Registered) String() string {
	s := fmt.Sprintf("registered %s as %s/%s", r.Schema.Command(), r.System, r.Name)
	if r.Flags&Persist == 0 {
		s += " (not persistent: gone when nothing uses it)"
	}
	return s
}

// CheckName is ValidName as an error: an *ArgError ("name") for a name
// that is not an event's.
func CheckName(name string) error {
	if !ValidName(name) {
		return &ArgError{"name", fmt.Errorf("bad event name %q", name)}
	}
	return nil
}

// DeleteGrace is how long Delete retries an event still busy: a process
// that just exited or exec'd releases its registrations after an RCU
// grace period.
const DeleteGrace = time.Second

// Delete deletes the event name from fs as 'iotap events delete' does:
// DeleteWait for up to DeleteGrace, after CheckName (fs nil:
// tracefs.Find).
func Delete(fs *tracefs.FS, name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	fs, err := findFS(fs)
	if err != nil {
		return err
	}
	return DeleteWait(fs, name, DeleteGrace)
}
