// Package progress shows how far a long job is, on standard error, the
// way pv and tcpdump do: nothing for the first seconds (a short job stays
// quiet), then one line redrawn in place on a terminal — bytes done, the
// percentage and the time left when the total is known, and the rate —
// and the line erased at the end. Redirected to a file (iotap --progress
// 2>log), it prints a full line every few seconds instead.
//
// A Meter is fed either by wrapping the input (Reader) or by Update with
// the bytes done so far. Every method does nothing on a nil *Meter, so a
// command can call them whether or not progress is shown.
package progress
