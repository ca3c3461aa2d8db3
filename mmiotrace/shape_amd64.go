package mmiotrace

// matchVec is rwShape.match with SSE2 (shape_amd64.s), which every
// amd64 CPU has.
//
//go:noescape
func matchVec(a *rwWindow, s *rwShape, nv int) bool

// match reports whether the line at a has shape s.
func (s *rwShape) match(a *rwWindow) bool { return matchVec(a, s, s.nv) }
