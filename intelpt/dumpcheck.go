package intelpt

import "errors"

// Check reports options that do not go together, in the words of
// ptdump's options: Time and TCal are two views of the timing.
func (o *DumpOptions) Check() error {
	if o.Time && o.TCal {
		return errors.New("specify either --time or --tcal")
	}
	return nil
}
