//go:build !amd64

package mmiotrace

// match reports whether the line at a has shape s.
func (s *rwShape) match(a *rwWindow) bool { return s.matchWords(a) }
