package main

// mmioProgress returns a progress callback for the job what and a function
// ending its line; nil and a no-op when progress is not shown (see
// env.meter).
func mmioProgress(e *env, what string, busy bool) (func(done, total int64), func()) {
	m := e.meter("iotap: "+what, -1, busy)
	if m == nil {
		return nil, func() {}
	}
	return func(done, total int64) {
		m.SetTotal(total)
		m.Update(done)
	}, m.Done
}
