package export

// OptionError is New's error for Options that do not go together or name
// what is not known (the user's mistake: 'iotap export' exits 2).
type OptionError struct{ Err error }

func (e *OptionError) Error() string { return e.Err.Error() }
func (e *OptionError) Unwrap() error { return e.Err }
