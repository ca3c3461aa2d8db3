package usb

import (
	"slices"
	"strconv"
)

// URB status values (negative errno) with the meaning usbmon users know
// them by (Documentation/driver-api/usb/error-codes.rst).
var statusNames = map[int32]string{
	0:    "OK",
	-1:   "EPERM",
	-2:   "ENOENT", // URB unlinked synchronously (usb_kill_urb)
	-5:   "EIO",
	-11:  "EAGAIN",
	-12:  "ENOMEM",
	-16:  "EBUSY",
	-18:  "EXDEV",  // ISO transfer only partially completed
	-19:  "ENODEV", // device removed
	-22:  "EINVAL",
	-27:  "EFBIG",
	-32:  "EPIPE", // endpoint stalled
	-61:  "ENODATA",
	-62:  "ETIME",      // no response (USB 1.1 timeout)
	-63:  "ENOSR",      // buffer error
	-71:  "EPROTO",     // bitstuff/CRC/handshake error
	-75:  "EOVERFLOW",  // babble
	-84:  "EILSEQ",     // CRC mismatch
	-104: "ECONNRESET", // URB unlinked asynchronously (usb_unlink_urb)
	-108: "ESHUTDOWN",  // host controller or device gone
	-110: "ETIMEDOUT",
	-115: "EINPROGRESS",
	-121: "EREMOTEIO", // short packet with URB_SHORT_NOT_OK
	-122: "EDQUOT",
	-150: "ECOMM", // data overrun
}

// StatusName returns the errno name of a URB status ("EPIPE" for -32,
// "OK" for 0), or the number when unknown.
func StatusName(st int32) string {
	if st == 0 { // most completions: no map lookup
		return "OK"
	}
	if n, ok := statusNames[st]; ok {
		return n
	}
	return strconv.Itoa(int(st))
}

// KnownStatuses returns the errno names StatusName knows, in order of
// their numbers (OK, EPERM, ENOENT, ...): the values ParseStatus accepts
// by name.
func KnownStatuses() []string {
	nums := make([]int32, 0, len(statusNames))
	for n := range statusNames {
		nums = append(nums, n)
	}
	slices.Sort(nums)
	slices.Reverse(nums)
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = statusNames[n]
	}
	return out
}

// ParseStatus accepts a status as a number ("-32"), an errno name with or
// without the minus sign ("EPIPE", "-EPIPE") or "stall" (-EPIPE).
func ParseStatus(s string) (int32, bool) {
	if n, err := strconv.ParseInt(s, 10, 32); err == nil {
		return int32(n), true
	}
	if s == "stall" || s == "STALL" {
		return -32, true
	}
	name := s
	if len(name) > 0 && name[0] == '-' {
		name = name[1:]
	}
	for v, n := range statusNames {
		if n == name || lower(n) == name {
			return v, true
		}
	}
	return 0, false
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// IsStall reports a stalled endpoint (-EPIPE).
func IsStall(st int32) bool { return st == -32 }

// IsCancel reports a URB unlinked by its driver (-ENOENT, -ECONNRESET) or
// killed because the device or controller went away (-ESHUTDOWN, -ENODEV):
// normal on disconnect and shutdown, not a bus error.
func IsCancel(st int32) bool { return st == -2 || st == -104 || st == -108 || st == -19 }
