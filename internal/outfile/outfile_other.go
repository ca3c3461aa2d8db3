//go:build !unix

package outfile

// O_NOFOLLOW does not exist here; Create still refuses an existing link
// (Lstat), and the temporary file is created with O_EXCL.
const noFollow = 0

func isNotSyncable(error) bool { return false }

func syncDir(string) {}
