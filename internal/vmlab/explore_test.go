package vmlab

import "testing"

func TestExplore(t *testing.T) {
	res := Run(t, Machine{NIC: true, Script: `set -x
cd /sys/kernel/tracing
cat current_tracer buffer_size_kb tracing_on
echo 4096 >buffer_size_kb || true
echo mmiotrace >current_tracer || true
cat current_tracer
dmesg | tail -5
`})
	t.Log(res.Console)
}
