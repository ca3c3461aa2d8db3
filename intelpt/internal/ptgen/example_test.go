package ptgen_test

import (
	"fmt"

	"github.com/iotap/iotap/intelpt"
	"github.com/iotap/iotap/intelpt/internal/ptgen"
)

func Example() {
	p, err := ptgen.Generate(ptgen.Config{Seed: 1, Insns: 10_000})
	if err != nil {
		panic(err)
	}
	// p.Code is loaded at p.Base; p.Trace is the PT trace of the run;
	// p.IPs holds the instructions that ran.
	fmt.Println(len(p.IPs), p.Trace[0] == 0x02, p.Stats.Packets[intelpt.KindPSB] > 0)
	// Output: 10000 true true
}
