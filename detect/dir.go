package detect

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// DirFiles lists the files that the commands taking a directory of traces
// (report, export) read from the directory root: the regular files of
// root and of its subdirectories, in lexical order, but not those of
// hidden directories (".git") or fuzz corpora ("fuzz" directories: test
// inputs, not traces). With links, a symbolic link to a regular file is
// listed too (a window's copy of a directory links the files it does not
// cut). Which of them are traces is Head's to say: a file it answers
// ErrNotTrace for is not one.
func DirFiles(root string, links bool) ([]string, error) {
	var files []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "fuzz" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		regular := d.Type().IsRegular()
		if links && d.Type()&fs.ModeSymlink != 0 {
			st, err := os.Stat(p)
			regular = err == nil && st.Mode().IsRegular()
		}
		if regular {
			files = append(files, p)
		}
		return nil
	})
	return files, err
}
