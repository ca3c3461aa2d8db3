// Package rotate holds the two output habits every iotap capture shares:
// a ring of files, as tshark -b writes (a new file every Size bytes or
// Duration, only the newest Files kept), and statistics every interval
// while capturing, as perf stat -I prints them.
//
// [Files] is the ring: it names, creates, counts and removes the files;
// the caller decides where a record ends and calls [Files.Due] before each
// one and [Files.Next] when it is due, so a record is never split between
// files (usbmon's Rotator starts each file with its pcapng header this
// way). [Lines] is that loop for line-oriented logs (mmiotrace, user
// events): an io.Writer that starts a new file only at a line boundary and
// repeats chosen header lines at the start of every file, so that each file
// reads on its own.
//
// [Interval] counts events and bytes from the capturing goroutine and
// reports them every interval from a goroutine of its own; the reports add
// up to the totals ([Stats]).
package rotate
