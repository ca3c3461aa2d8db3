// Package filter is the display-filter language shared by iotap's readers
// (usb read/stats/pair/convert, mmio read, events read: -Y/--filter), in
// the spirit of tshark's -Y:
//
//	usb.endpoint_address == 0x81 && usb.urb_status != 0
//	mmio.reg == "CTRL" || (mmio.width == 4 && mmio.value > 0xff)
//	event.name == "http_req" && event.status >= 500
//
// An expression compares fields, numbers (decimal, 0x, 0o, 0b, negative,
// 'c' characters) and double-quoted strings with ==, !=, <, <=, >, >= (or
// eq, ne, lt, le, gt, ge) and contains (strings), and combines tests with
// && (and), || (or), ! (not) and parentheses. A bare field is true when
// the record has it. As in tshark, any comparison with a field the record
// does not have is false: "usb.setup.bRequest != 6" selects only events
// with a bRequest other than 6, "!(usb.setup.bRequest == 6)" also the
// events without one.
//
// Parse turns the text into an Expr; Compile checks it against a Table,
// the fields of one kind of record, and returns a predicate. The tables
// live with their records: usb.FilterFields (tshark's usb.* names),
// mmiotrace.FilterFields, userevents.FilterFields. Errors are
// *SyntaxError values carrying the byte position of the problem.
package filter
