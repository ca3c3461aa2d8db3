// Package outfile creates the files iotap writes, the same way everywhere:
//
//   - private: mode 0600 (captures hold device traffic, keystrokes, memory);
//   - never through a symbolic link (root writes these files: a link planted
//     in /tmp must not redirect the write);
//   - never over one of the command's inputs: an output that is the same file
//     as a registered input (same device and inode, whatever the path: through
//     a symbolic link, a hard link, "./x" or "x") is refused with ErrSameFile;
//   - atomically: by default the data goes to a temporary file in the same
//     directory, which Commit flushes to disk (fsync) and renames over the
//     final name, and Abort removes. A failure or an interrupted command never
//     leaves a half-written file in place of a good one.
//
// Live captures, whose data must survive the process being killed, use
// InPlace (written under the final name as it is produced); files a command
// names itself inside a fresh directory use Exclusive (never replace
// anything). Character devices and named pipes (/dev/null, a FIFO) are
// written directly, in every mode. The path "-" is standard output.
//
// Typical use:
//
//	var in outfile.Inputs
//	in.Add(inputPath)
//	f, err := outfile.Create(outPath, outfile.Options{Inputs: &in})
//	if err != nil {
//		return err
//	}
//	defer f.Abort() // no-op after Commit
//	... write to f ...
//	return f.Commit()
package outfile
