// Package usb decodes the USB protocol carried by usbmon events and analyses
// event streams.
//
// Decoding is pure: every decoder takes bytes and returns a typed value or an
// error of type *FormatError that names the structure and the byte offset of
// the problem. Decoders never panic on short or corrupt input and never
// allocate more than their input justifies.
//
//   - Setup packets (ParseSetup) with every chapter 9 standard request and the
//     HID, mass storage, hub and CDC class requests (Setup.Describe).
//   - Descriptors: device, configuration (walked with its interfaces,
//     endpoints and class descriptors), interface, endpoint, string, BOS and
//     device capabilities, HID, hub (USB 2 and SuperSpeed), CDC functional,
//     SuperSpeed endpoint companion, interface association.
//   - HID report descriptors (ParseReportDescriptor) into an item tree with
//     usage names, the fields of every report and a per-report size
//     summary; ReportDescriptor.DecodeReport decodes reports with them.
//   - Mass storage Bulk-Only Transport: CBW, CSW, SCSI CDBs and the INQUIRY,
//     READ CAPACITY, MODE SENSE and sense data responses.
//   - CDC line coding and control line state.
//
// Analysis works on usbmon.Event streams: Filter selects events, Pairer
// matches submissions with their completions (URB ids are reused kernel
// pointers), Stats accumulates per-endpoint counts, bytes, latency and
// errors in bounded memory (latency percentiles from a fixed-size
// Histogram), Identities learns VID:PID, strings, interface classes and HID
// report descriptors from enumeration seen in a capture or from sysfs
// (LoadSysfs), and Decoder turns events into one-line summaries.
package usb
