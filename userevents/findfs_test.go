package userevents

import (
	"errors"
	"fmt"
	"reflect"
	"testing"

	"github.com/iotap/iotap/tracefs"
)

// A nil FS is this system's tracefs (tracefs.Find): ReadStatus,
// ReadDefinitions and Delete give what they give on Find's FS (nothing
// is changed: the event deleted does not exist).
func TestNilFSFinds(t *testing.T) {
	found, ferr := tracefs.Find()
	st, err := ReadStatus(nil)
	if ferr != nil {
		if !errors.Is(err, tracefs.ErrNotMounted) {
			t.Fatalf("no tracefs (%v): ReadStatus(nil) = %v", ferr, err)
		}
		t.Skipf("no tracefs here: %v", ferr)
	}
	st2, err2 := ReadStatus(found)
	if fmt.Sprint(err) != fmt.Sprint(err2) || !reflect.DeepEqual(st, st2) {
		t.Errorf("ReadStatus(nil) = %v, %v; on %s: %v, %v", st, err, found.Root(), st2, err2)
	}
	defs, err := ReadDefinitions(nil)
	defs2, err2 := ReadDefinitions(found)
	if fmt.Sprint(err) != fmt.Sprint(err2) || len(defs) != len(defs2) {
		t.Errorf("ReadDefinitions(nil) = %d, %v; on %s: %d, %v", len(defs), err, found.Root(), len(defs2), err2)
	}
	const name = "iotap_test_no_such_event"
	err, err2 = Delete(nil, name), Delete(found, name)
	if err == nil || fmt.Sprint(err) != fmt.Sprint(err2) {
		t.Errorf("Delete(nil, %s) = %v; on %s: %v", name, err, found.Root(), err2)
	}
}
