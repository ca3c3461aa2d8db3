// Command hellogo is a guest binary of the vmlab tests: it writes its
// arguments to the file named by its first argument.
package main

import (
	"os"
	"strings"
)

func main() {
	if len(os.Args) < 2 {
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], []byte("go "+strings.Join(os.Args[2:], " ")+"\n"), 0o644); err != nil {
		os.Exit(1)
	}
}
