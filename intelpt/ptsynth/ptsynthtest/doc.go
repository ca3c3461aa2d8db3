// Package ptsynthtest is the set-up shared by the tests that trace the
// test program of package ptsynth: Prog synthesizes its run (skipping the
// test where gcc is missing, failing it on an error) and PerfData also
// writes the run's perf.data, as every PT-calls test of timeline, export,
// cut and cmd/iotap did by hand. Linux only, as ptsynth's recording.
package ptsynthtest
