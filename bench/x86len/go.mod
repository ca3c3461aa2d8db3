// A separate module so that the comparison with golang.org/x/arch/x86/x86asm
// adds no dependency to iotap itself. Run bench/x86len.sh.
module github.com/iotap/iotap/bench/x86len

go 1.26.8

require (
	github.com/iotap/iotap v0.0.0
	golang.org/x/arch v0.32.0
)

replace github.com/iotap/iotap => ../..
