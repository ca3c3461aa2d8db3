package intelpt

// SetDropHook sets m's drop lag and makes drop take each range DropBefore
// drops, given with its offsets in the file (the whole file is mapped).
func SetDropHook(m *MappedTrace, lag int64, drop func(b []byte, from, to int)) {
	m.lag = lag
	m.dropFunc = func(b []byte) {
		lo := len(m.mem) - cap(b)
		drop(b, lo, lo+len(b))
	}
}
