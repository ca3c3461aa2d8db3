package main

import (
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usbmon"
	"github.com/iotap/iotap/userevents"
)

// TestOneErrNotSupported: the module has one ErrNotSupported, exported by
// every package that captures, so that a caller tests any of them.
func TestOneErrNotSupported(t *testing.T) {
	all := []error{usbmon.ErrNotSupported, mmiotrace.ErrNotSupported, userevents.ErrNotSupported, intelpt.ErrNotSupported}
	for i, e := range all {
		err := fmt.Errorf("x: %w: missing piece", e)
		for j, o := range all {
			if !errors.Is(err, o) {
				t.Errorf("sentinel %d does not match sentinel %d", i, j)
			}
		}
	}
}

// TestGoVersionMatchesREADME: go.mod's go line is the Go the README asks
// for, so that a user with that Go builds without a toolchain download.
func TestGoVersionMatchesREADME(t *testing.T) {
	mod, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)(\.0)?$`).FindSubmatch(mod)
	if m == nil {
		t.Fatalf("go.mod: no 'go X.Y' or 'go X.Y.0' line (a patch release would make Go X.Y.0 download a toolchain)")
	}
	if want := "Go (" + string(m[1]) + " or later)"; !strings.Contains(string(readme), want) {
		t.Errorf("README.md does not ask for %q (go.mod: go %s)", want, m[1])
	}
	if regexp.MustCompile(`(?m)^toolchain `).Match(mod) {
		t.Error("go.mod has a toolchain line")
	}
}
