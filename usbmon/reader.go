package usbmon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/internal/compress"
)

// Reader streams usbmon events.
type Reader interface {
	// ReadInto fills ev with the next event. It returns io.EOF at the end.
	// It does not allocate once its buffers have grown; ev.Data and ev.ISO
	// then alias the reader's buffers until the next call.
	ReadInto(ev *Event) error
	// Read returns the next event in new memory (it allocates).
	Read() (*Event, error)
	// Format is the format being read.
	Format() Format
}

// ReaderOptions tune NewReaderOptions.
type ReaderOptions struct {
	// KeepGoing makes text readers skip lines that do not parse instead of
	// failing; Skipped counts them and OnSkip (if set) sees each error.
	KeepGoing bool
	OnSkip    func(err error)
}

// SkipLogLines is how many skipped lines LogSkipped says; the others
// are only counted (Skipper, and the loss of the reader).
const SkipLogLines = 10

// LogSkipped returns an OnSkip (ReaderOptions, ConvertOptions) that
// writes the errors of the first SkipLogLines lines skipped to w, one a
// line after prefix, as 'iotap usb read' and 'usb convert --keep-going'
// say them ("iotap: skipped: ").
func LogSkipped(w io.Writer, prefix string) func(error) {
	skipped := 0
	return func(err error) {
		if skipped++; skipped <= SkipLogLines {
			fmt.Fprintf(w, "%s%v\n", prefix, err)
		}
	}
}

// Skipper is implemented by readers that can skip bad input (text).
type Skipper interface {
	// Skipped returns the number of lines skipped so far.
	Skipped() int
}

// LinkTyper is implemented by pcap and pcapng readers.
type LinkTyper interface {
	// LinkType returns the link type of the last event read (189 or 220).
	LinkType() int
}

// readBufSize is the size of the reads from the input: measured on the
// 22 MB benchmark capture, 64 KiB reads cost 30% less CPU than 1 MiB ones
// (docs/performance.md).
const readBufSize = 64 << 10

// NewReader detects the format of r from its first bytes (pcap in either
// byte order, pcapng, text 1u or 1t, or a raw copy of /dev/usbmonN: 48-byte
// records as read(2) returns them) and returns a reader for it.
func NewReader(r io.Reader) (Reader, Format, error) {
	return NewReaderOptions(r, ReaderOptions{})
}

// NewReaderOptions is NewReader with options. Input compressed with gzip,
// xz or zstd is recognised by its content (not a file name) and read
// decompressed.
func NewReaderOptions(r io.Reader, opt ReaderOptions) (Reader, Format, error) {
	// Read the head to detect the format, then put it back in front of r:
	// each reader buffers r its own way (no double buffering of the data).
	head := make([]byte, 512)
	n, err := io.ReadFull(r, head)
	head = head[:n]
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, FormatUnknown, err
	}
	if n == 0 {
		return nil, FormatUnknown, &FormatError{Offset: 0, Msg: "empty input", Err: ErrTruncated}
	}
	all := io.MultiReader(bytes.NewReader(head), r)
	if compress.Detect(head) != compress.None {
		zr, c, closeDec, err := compress.Decompress(all)
		if err != nil {
			return nil, FormatUnknown, &FormatError{Offset: 0, Msg: c.String() + " input does not decompress", Err: errors.Join(ErrFormat, err)}
		}
		return NewReaderOptions(&releaseAtEOF{r: zr, release: closeDec}, opt)
	}
	switch {
	case isPcapMagic(head):
		pr, err := newPcapReader(bufio.NewReaderSize(all, readBufSize))
		if err != nil {
			return nil, FormatPcap, err
		}
		return pr, FormatPcap, nil
	case bytes.HasPrefix(head, []byte{0x0a, 0x0d, 0x0d, 0x0a}):
		// 64 KiB reads: cheaper per byte than 1 MiB ones (the copy stays
		// in the L2 cache) and a smaller buffer to clear; blocks larger
		// than the buffer are read aside (pcapngReader.big).
		pr, err := newPcapngReader(bufio.NewReaderSize(all, readBufSize), head)
		if err != nil {
			return nil, FormatPcapng, err
		}
		return pr, FormatPcapng, nil
	}
	if bo, ok := sniffBinary(head); ok {
		br, err := NewBinaryReader(all, HeaderLen48, bo)
		return br, FormatBinary, err
	}
	f, err := sniffText(head)
	if err != nil {
		return nil, FormatUnknown, err
	}
	return newTextReader(r, head, f, opt), f, nil
}

// sniffText decides between 1u and 1t from the address word of the first
// line that has one: 1u has three colons (type:bus:dev:ep), 1t two. Lines
// before it are left to the text reader (an error, or skipped with
// KeepGoing).
func sniffText(head []byte) (Format, error) {
	rest := head
	for len(rest) > 0 {
		line := rest
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, rest = line[:i], rest[i+1:]
		} else {
			rest = nil
		}
		fields := bytes.Fields(line)
		if len(fields) < 4 {
			continue
		}
		switch bytes.Count(fields[3], []byte{':'}) {
		case 3:
			return Format1u, nil
		case 2:
			return Format1t, nil
		}
	}
	return FormatUnknown, &FormatError{Offset: 0, Msg: "not a pcap, pcapng, usbmon text or raw /dev/usbmonN file", Err: ErrFormat}
}

// releaseAtEOF releases a decompressor's resources when its stream ends.
type releaseAtEOF struct {
	r       io.Reader
	release func()
}

func (z *releaseAtEOF) Read(p []byte) (int, error) {
	if z.r == nil {
		return 0, io.EOF
	}
	n, err := z.r.Read(p)
	if err == io.EOF {
		z.release()
		z.r = nil
	}
	return n, err
}
