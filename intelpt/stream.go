package intelpt

import (
	"errors"
	"io"
)

// maxPacket is more than the largest packet (PSB, 16 bytes): the stream
// decoder refills its window before fewer bytes than this remain.
const maxPacket = 32

// StreamDecoder decodes packets from an io.Reader through a fixed window,
// so traces of any size decode in constant memory. Offsets are from the
// start of the stream. It does not allocate per packet.
type StreamDecoder struct {
	r      io.Reader
	window []byte
	base   int64 // stream offset of window[0]
	d      Decoder
	eof    bool
	rerr   error
}

// NewStreamDecoder returns a decoder reading r with a window of size bytes
// (at least 4 KiB; 0 means 1 MiB). It starts at offset 0; call SyncForward
// to start at the first PSB.
func NewStreamDecoder(r io.Reader, cfg Config, size int) *StreamDecoder {
	if size == 0 {
		size = 1 << 20
	}
	size = max(size, 4096)
	return newStreamDecoder(r, cfg, size)
}

// newStreamDecoder allows tiny windows (tests).
func newStreamDecoder(r io.Reader, cfg Config, size int) *StreamDecoder {
	return streamDecoderWith(r, cfg, make([]byte, max(size, 2*maxPacket)))
}

// streamDecoderWith returns a decoder reading r through window (at
// least 2*maxPacket bytes), which it reuses.
func streamDecoderWith(r io.Reader, cfg Config, window []byte) *StreamDecoder {
	s := &StreamDecoder{r: r, window: window}
	s.d = Decoder{sync: -1, cfg: cfg, buf: window[:0]}
	return s
}

// streamOver returns a StreamDecoder over buf as a whole stream (nothing
// more to read).
func streamOver(buf []byte, cfg Config) *StreamDecoder {
	s := &StreamDecoder{window: buf, eof: true}
	s.d = Decoder{sync: -1, cfg: cfg, buf: buf}
	return s
}

// end returns the stream offset of the end of what was read: the end of
// the stream once Next or SyncForward have reached it.
func (s *StreamDecoder) end() int64 { return s.base + int64(len(s.d.buf)) }

// Offset returns the stream offset of the next packet.
func (s *StreamDecoder) Offset() int64 { return s.base + int64(s.d.pos) }

// SyncOffset returns the stream offset of the last PSB, or -1.
func (s *StreamDecoder) SyncOffset() int64 {
	if s.d.sync < 0 {
		return -1
	}
	return s.base + int64(s.d.sync)
}

// Bytes returns the bytes of the stream at [off, off+n) if they are still
// in the window (the packet just decoded always is), or nil.
func (s *StreamDecoder) Bytes(off int64, n int) []byte {
	i := off - s.base
	if i < 0 || i+int64(n) > int64(len(s.d.buf)) {
		return nil
	}
	return s.d.buf[i : i+int64(n)]
}

// fill moves the unread bytes (from an 8-byte aligned point, so PSB search
// alignment stays that of the stream) to the front and reads more.
func (s *StreamDecoder) fill(keepFrom int) {
	keep := keepFrom &^ 7
	n := copy(s.window, s.d.buf[keep:])
	s.base += int64(keep)
	s.d.pos -= keep
	if s.d.sync >= 0 {
		s.d.sync -= keep
		if s.d.sync < 0 {
			s.d.sync = -2 // before the window: never equal to pos
		}
	}
	for n < len(s.window) && !s.eof {
		m, err := s.r.Read(s.window[n:])
		n += m
		if err != nil {
			s.eof = true
			if !errors.Is(err, io.EOF) {
				s.rerr = err
			}
		}
	}
	s.d.buf = s.window[:n]
}

// Err returns the read error that ended the stream early, if any (io.EOF
// is not an error).
func (s *StreamDecoder) Err() error { return s.rerr }

// Next decodes the next packet into p; see Decoder.Next. Error offsets are
// stream offsets. A read error ends the stream (Next returns io.EOF or
// ErrTruncated; check Err).
func (s *StreamDecoder) Next(p *Packet) error {
	if !s.eof && len(s.d.buf)-s.d.pos < maxPacket {
		// Keep 15 bytes before the packet: a resync after a bad packet
		// looks back that far for a PSB the bad packet overlapped.
		s.fill(max(s.d.pos-(psbSize-1), 0))
	}
	err := s.d.Next(p)
	if err != nil && err != io.EOF {
		var de *DecodeError
		if errors.As(err, &de) {
			de.Offset += s.base
		}
	}
	return err
}

// SyncForward moves to the next PSB, reading as far as needed. It finds
// the same PSB as Decoder.SyncForward on the whole stream.
func (s *StreamDecoder) SyncForward() error {
	from := s.Offset()
	// The search bounds, in stream offsets, as Decoder.SyncForward sets them.
	if !s.eof && len(s.d.buf)-s.d.pos < 2*maxPacket {
		s.fill(max(s.d.pos-(psbSize-1), 0))
	}
	p := s.d.pos
	if p == s.d.sync {
		p += psbSize
	}
	p = min(p, len(s.d.buf))
	p -= min(p, psbSize-1)
	start := s.base + int64(p)
	scan := start
	for {
		// findPSB may look back 16 bytes from a scanned word.
		if !s.eof && s.base+int64(len(s.d.buf))-scan < 2*maxPacket {
			s.fill(int(max(scan-psbSize-s.base, 0)))
		}
		// A word is only judged when the PSB it may belong to is entirely
		// in the window (16 bytes after it) or the stream has ended.
		limit := len(s.d.buf)
		if !s.eof {
			limit -= psbSize + 8
		}
		at, next := s.d.scanPSB(int(scan-s.base), int(max(start-s.base, 0)), limit)
		if at >= 0 {
			// A run of PSB patterns reaching the end of the window may go
			// on: the PSB is the last one of the run, so read more.
			if s.eof || at+psbSize+2 <= len(s.d.buf) {
				s.d.pos, s.d.sync, s.d.block = at, at, 0
				return nil
			}
			base, n := s.base, len(s.d.buf)
			scan = s.base + int64(at)
			s.fill(int(max(scan-psbSize-s.base, 0)))
			if s.base == base && len(s.d.buf) == n { // window full: accept
				s.d.pos, s.d.sync, s.d.block = at, at, 0
				return nil
			}
			continue
		}
		if s.eof {
			return decodeErr(int(from), ErrNoSync)
		}
		// Continue with the first word not searched.
		scan = s.base + int64(next)
		s.fill(int(max(scan-psbSize-s.base, 0)))
	}
}

// startAt reads from the start and treats off (at most 7 bytes after
// the stream's start, s.base) as synchronised, as startHere does.
func (s *StreamDecoder) startAt(off int64) {
	s.fill(0)
	s.d.pos = int(min(max(off-s.base, 0), int64(len(s.d.buf))))
	s.d.sync, s.d.block = s.d.pos, 0
}

// startHere treats the current position (the start) as synchronised, like
// Decoder.SetOffset(0).
func (s *StreamDecoder) startHere() {
	s.d.sync = s.d.pos
}
