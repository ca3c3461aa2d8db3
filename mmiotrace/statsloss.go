package mmiotrace

// Loss is LossMessages of what Analyze read: lost events, bad lines
// skipped, a last line cut short; nil when the log is complete.
func (s *Stats) Loss() []string {
	return LossMessages(s.Lost, s.Skipped, s.FirstSkip, s.Truncated, s.Lines)
}

// Loss is LossMessages of what FilterLog read.
func (s FilterStats) Loss() []string {
	return LossMessages(s.Lost, s.Skipped, s.FirstSkip, s.Truncated, s.Lines)
}

// Loss is LossMessages of what ConvertLog read.
func (s ConvertStats) Loss() []string {
	return LossMessages(s.Lost, s.Skipped, s.FirstSkip, s.Truncated, s.Lines)
}
