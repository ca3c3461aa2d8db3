// Package mapfile maps files read-only and turns a fault on a mapped
// file into an error. A file mapped into memory can shrink while it is
// read: a log still being written, copied or rotated, truncated by
// another process. Reading a page of the mapping that now lies past the
// file's end raises SIGBUS, which kills a Go program. With Protect and
// Catch around the code that reads a Mapping, such a fault becomes a
// *FaultError naming the file and the offset read, as the Go command's
// module index does for its own mapped files.
//
// The guard is per goroutine (runtime/debug.SetPanicOnFault): every
// goroutine that reads a mapping needs its own, at the top of the work
// that reads it:
//
//	func decode(m *mapfile.Mapping) (err error) {
//		defer mapfile.Catch(&err, mapfile.Protect())
//		... read m.Data ...
//	}
//
// A fault at an address outside every mapping made here is not a
// truncated file: Catch panics again with it.
package mapfile
