package rotate_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/iotap/iotap/rotate"
)

// A log written in pieces into files of about 40 bytes (a file ends with the
// first line that reaches 40), the newest two kept; every file starts with the log's header line.
func ExampleNewRotatingLines() {
	dir, _ := os.MkdirTemp("", "rotate")
	defer os.RemoveAll(dir)
	files, err := rotate.NewFiles(rotate.Options{Path: filepath.Join(dir, "trace.log"), Size: 40, Files: 2})
	if err != nil {
		fmt.Println(err)
		return
	}
	header := func(line []byte) bool { return strings.HasPrefix(string(line), "VERSION") }
	w, err := rotate.NewRotatingLines(files, rotate.LineOptions{Header: header})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Fprint(w, "VERSION 1\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(w, "record %02d\n", i)
	}
	if err := w.Close(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(files.Started(), "files started")
	for _, name := range files.Names() {
		b, _ := os.ReadFile(name)
		fmt.Printf("%q\n", b)
	}
	// Output:
	// 4 files started
	// "VERSION 1\nrecord 07\nrecord 08\nrecord 09\n"
	// "VERSION 1\nrecord 10\nrecord 11\nrecord 12\n"
}

// The rotation flags of the capture commands (--ring, --file-size,
// --file-duration) as a program gives them.
func ExampleArgs() {
	o, err := rotate.Args{Ring: 10, FileSize: "100M"}.Options("usb.pcapng")
	fmt.Println(o.Files, o.Size, err)
	_, err = rotate.Args{Ring: 10}.Options("usb.pcapng")
	fmt.Println(err)
	// Output:
	// 10 104857600 <nil>
	// --ring 10 needs --file-size or --file-duration
}
