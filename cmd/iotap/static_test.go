package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNoCgoOutsideStd backs README's install line (CGO_ENABLED=0 go
// install ./cmd/iotap): no package of iotap or of its modules has cgo
// files, so the static build has every feature of the default one (only
// the standard library's net and os/user have cgo variants, with pure Go
// equivalents).
func TestNoCgoOutsideStd(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}", ".")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	if s := strings.TrimSpace(string(out)); s != "" {
		t.Fatalf("packages with cgo files outside the standard library (README says iotap builds static):\n%s", s)
	}
}
