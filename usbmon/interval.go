package usbmon

import "github.com/iotap/iotap/rotate"

// IntervalStats are the counts of one interval of a [Recording]'s
// periodic statistics (RecordOptions.Interval), as perf stat -I prints
// them: the events written in [Start, End) and their captured data bytes.
// Over all intervals they add up to the recording's totals. They are
// counted by [rotate.Interval], as mmio capture's and events record's are.
type IntervalStats = rotate.Stats
