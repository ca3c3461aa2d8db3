package detect

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/iotap/iotap/internal/compress"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/usbmon"
)

// HeadSize is how much of an input detection looks at.
const HeadSize = 64 << 10

// Kind is a source of traces.
type Kind string

// The kinds of trace iotap reads.
const (
	USB    Kind = "usb"
	MMIO   Kind = "mmio"
	Events Kind = "events"
	PT     Kind = "pt"
)

// Name is how a message names one input of the kind.
func (k Kind) Name() string {
	switch k {
	case USB:
		return "a usbmon capture"
	case MMIO:
		return "an mmiotrace log"
	case Events:
		return "a user_events NDJSON trace"
	case PT:
		return "an Intel PT trace"
	}
	return "a trace iotap reads"
}

// Result is what an input was recognised as.
type Result struct {
	Kind Kind
	// Format names the format: "usbmon pcapng", "mmiotrace log", ...
	Format string
	// Compression is "gzip", "xz" or "zstd" for a compressed input.
	Compression string
}

func (r Result) String() string {
	if r.Compression != "" {
		return r.Format + " (" + r.Compression + "-compressed)"
	}
	return r.Format
}

// ErrNotTrace is matched by every *NotTraceError.
var ErrNotTrace = errors.New("not a trace")

// NotTraceError says that an input is not (the expected kind of) trace,
// what it looks like instead and why.
type NotTraceError struct {
	// Want is the kind that was expected, "" for any.
	Want Kind
	// Found is set when the input is a trace of another kind.
	Found *Result
	// What the content looks like: "empty", "a PNG image", "text",
	// "binary data"...
	What string
	// Compression is set when the content was decompressed first.
	Compression string
	// Why gives the reason (the line or field that failed).
	Why string
}

func (e *NotTraceError) Error() string {
	var b strings.Builder
	b.WriteString("not ")
	b.WriteString(e.Want.Name())
	b.WriteString(": ")
	if e.Found != nil {
		fmt.Fprintf(&b, "it is %s", e.Found)
	} else {
		if e.Compression != "" {
			b.WriteString(e.Compression + "-compressed ")
		}
		b.WriteString(e.What)
	}
	if e.Why != "" {
		b.WriteString(" (" + e.Why + ")")
	}
	return b.String()
}

// Is makes errors.Is(err, ErrNotTrace) true.
func (e *NotTraceError) Is(target error) bool { return target == ErrNotTrace }

// ReadHead reads the first HeadSize bytes of r (fewer at the end of the
// input: complete is then true) and returns a reader that replays them
// before the rest of r.
func ReadHead(r io.Reader) (head []byte, complete bool, rest io.Reader, err error) {
	head = make([]byte, HeadSize)
	n, err := io.ReadFull(r, head)
	head = head[:n]
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		complete, err = true, nil
	case err != nil:
		return head, false, nil, err
	}
	return head, complete, io.MultiReader(bytes.NewReader(head), r), nil
}

// Head recognises the trace whose first bytes are head. complete says that
// head is the whole input (its last line is not cut by the sniffing).
func Head(head []byte, complete bool) (Result, error) {
	if comp := compression(head); comp != "" {
		inner, innerComplete, err := decompressHead(head, complete)
		if err != nil {
			return Result{}, &NotTraceError{What: comp + "-compressed data that does not decompress", Why: err.Error()}
		}
		res, err := plain(inner, innerComplete)
		if err != nil {
			var nt *NotTraceError
			if errors.As(err, &nt) {
				nt.Compression = comp
			}
			return Result{}, err
		}
		res.Compression = comp
		return res, nil
	}
	return plain(head, complete)
}

// Expect is Head for an input that must be of kind want: a trace of
// another kind is an error that names it.
func Expect(head []byte, complete bool, want Kind) (Result, error) {
	res, err := Head(head, complete)
	if err != nil {
		var nt *NotTraceError
		if errors.As(err, &nt) {
			nt.Want = want
			if want == USB && nt.What == "text" {
				// The reason given is the mmiotrace one: give usbmon's.
				if _, uerr := usbHead(head, complete); uerr != nil {
					var ut *NotTraceError
					if errors.As(uerr, &ut) {
						nt.Why = ut.Why
					}
				}
			}
		}
		return Result{}, err
	}
	if res.Kind != want {
		return Result{}, &NotTraceError{Want: want, Found: &res, Why: "use 'iotap " + string(res.Kind) + " ...'"}
	}
	return res, nil
}

func compression(head []byte) string {
	switch compress.Detect(head) {
	case compress.Gzip:
		return "gzip"
	case compress.XZ:
		return "xz"
	case compress.Zstd:
		return "zstd"
	}
	return ""
}

// decompressHead decompresses what head holds, up to HeadSize bytes.
func decompressHead(head []byte, complete bool) ([]byte, bool, error) {
	zr, _, closeDec, err := compress.Decompress(bytes.NewReader(head))
	if err != nil {
		return nil, false, errors.Unwrap(err)
	}
	defer closeDec()
	out := make([]byte, HeadSize)
	n, err := io.ReadFull(zr, out)
	out = out[:n]
	switch {
	case err == nil:
		return out, false, nil
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		// The whole compressed input decompressed: complete.
		return out, complete, nil
	case n > 0 && !complete:
		// The head cut the compressed stream: what came out is a head.
		return out, false, nil
	}
	return nil, false, err
}

var (
	psb     = bytes.Repeat([]byte{0x02, 0x82}, 8)
	perfMag = []byte("PERFILE2")
)

func plain(head []byte, complete bool) (Result, error) {
	switch {
	case len(head) == 0:
		return Result{}, &NotTraceError{What: "empty", Why: "the input has no bytes"}
	case bytes.HasPrefix(head, perfMag):
		if len(head) >= 24 {
			size := le64(head[8:])
			if size < 64 || size > 4096 {
				return Result{}, &NotTraceError{What: "a damaged perf.data file", Why: fmt.Sprintf("header size %d", size)}
			}
		}
		return Result{Kind: PT, Format: "perf.data"}, nil
	case bytes.HasPrefix(head, psb[:min(len(head), len(psb))]) && len(head) >= 8:
		return Result{Kind: PT, Format: "raw Intel PT"}, nil
	case isPcap(head):
		return usbHead(head, complete)
	case bytes.Contains(head, psb):
		// A snapshot of a PT ring starts anywhere: decoding starts at the
		// first PSB packet.
		return Result{Kind: PT, Format: "raw Intel PT"}, nil
	case head[0] == '{':
		return eventsHead(head, complete)
	}
	if what := magic(head); what != "" {
		return Result{}, &NotTraceError{What: what}
	}
	if looksText(head) {
		res, mmioErr := mmioHead(head, complete)
		if mmioErr == nil {
			return res, nil
		}
		if res, err := usbHead(head, complete); err == nil && res.Format != "usbmon binary" {
			return res, nil
		}
		return Result{}, mmioErr
	}
	if res, err := usbHead(head, complete); err == nil {
		return res, nil
	}
	return Result{}, &NotTraceError{What: "binary data", Why: "no trace format recognised"}
}

func le64(b []byte) uint64 {
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

func isPcap(h []byte) bool {
	if len(h) < 4 {
		return false
	}
	switch string(h[:4]) {
	case "\xd4\xc3\xb2\xa1", "\xa1\xb2\xc3\xd4", "\x4d\x3c\xb2\xa1", "\xa1\xb2\x3c\x4d", "\x0a\x0d\x0d\x0a":
		return true
	}
	return false
}

// magic names common non-trace files from their magic bytes.
func magic(h []byte) string {
	for _, m := range []struct{ prefix, what string }{
		{"\x89PNG\r\n\x1a\n", "a PNG image"},
		{"\xff\xd8\xff", "a JPEG image"},
		{"GIF8", "a GIF image"},
		{"%PDF-", "a PDF document"},
		{"\x7fELF", "an ELF executable"},
		{"PK\x03\x04", "a zip archive"},
		{"BZh", "bzip2-compressed data (not supported: use gzip, xz or zstd)"},
		{"SQLite format 3\x00", "an SQLite database"},
		{"PAR1", "a Parquet file"},
	} {
		if bytes.HasPrefix(h, []byte(m.prefix)) {
			return m.what
		}
	}
	if len(h) > 262 && string(h[257:262]) == "ustar" {
		return "a tar archive"
	}
	return ""
}

// looksText: no NUL and valid UTF-8 in the first KiB (a cut rune at the
// end is fine).
func looksText(h []byte) bool {
	h = h[:min(len(h), 1024)]
	if bytes.IndexByte(h, 0) >= 0 {
		return false
	}
	for len(h) > 0 {
		r, n := utf8.DecodeRune(h)
		if r == utf8.RuneError && n <= 1 {
			return len(h) < utf8.UTFMax && !utf8.FullRune(h)
		}
		h = h[n:]
	}
	return true
}

// lines returns the complete lines of head (and the last one if the head
// is the whole input).
func lines(head []byte, complete bool) [][]byte {
	var out [][]byte
	for len(head) > 0 {
		i := bytes.IndexByte(head, '\n')
		if i < 0 {
			if complete {
				out = append(out, head)
			}
			break
		}
		out = append(out, bytes.TrimSuffix(head[:i], []byte("\r")))
		head = head[i+1:]
	}
	return out
}

// mmioScan is how many lines mmioHead reads for its first record.
const mmioScan = 64

func mmioHead(head []byte, complete bool) (Result, error) {
	ls := lines(head, complete)
	var rec mmiotrace.Record
	for i, l := range ls {
		if i >= mmioScan {
			break
		}
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		err := mmiotrace.ParseLine(l, &rec)
		if err != nil {
			return Result{}, &NotTraceError{What: "text", Why: fmt.Sprintf("line %d: %v", i+1, strings.TrimPrefix(err.Error(), "mmiotrace: "))}
		}
		switch rec.Kind {
		case mmiotrace.KindComment:
			continue
		case mmiotrace.KindOther:
			return Result{}, &NotTraceError{What: "text", Why: fmt.Sprintf("line %d is not an mmiotrace record: %s", i+1, quote(l))}
		}
		return Result{Kind: MMIO, Format: "mmiotrace log"}, nil
	}
	if len(ls) == 0 {
		return Result{}, &NotTraceError{What: "text", Why: "no complete line"}
	}
	return Result{}, &NotTraceError{What: "text", Why: fmt.Sprintf("no mmiotrace record in the first %d lines", min(len(ls), mmioScan))}
}

func quote(l []byte) string {
	if len(l) > 40 {
		return fmt.Sprintf("%q...", l[:40])
	}
	return fmt.Sprintf("%q", l)
}

func usbHead(head []byte, complete bool) (Result, error) {
	r, f, err := usbmon.NewReaderOptions(bytes.NewReader(head), usbmon.ReaderOptions{})
	if err != nil {
		what := "data"
		if isPcap(head) {
			what = "a pcap/pcapng file that is not a usbmon capture"
		}
		return Result{}, &NotTraceError{What: what, Why: strings.TrimPrefix(err.Error(), "usbmon: ")}
	}
	var ev usbmon.Event
	if err := r.ReadInto(&ev); err != nil && !(errors.Is(err, io.EOF) && f != usbmon.Format1u && f != usbmon.Format1t) {
		// A pcap(ng) head may be cut inside the first packet; an empty
		// pcap(ng) (header only) is a valid capture of nothing.
		if !(errors.Is(err, usbmon.ErrTruncated) && (!complete || f == usbmon.FormatPcap || f == usbmon.FormatPcapng)) {
			return Result{}, &NotTraceError{What: "data", Why: "first event: " + strings.TrimPrefix(err.Error(), "usbmon: ")}
		}
	}
	return Result{Kind: USB, Format: "usbmon " + f.String()}, nil
}

func eventsHead(head []byte, complete bool) (Result, error) {
	ls := lines(head, complete)
	if len(ls) == 0 {
		return Result{}, &NotTraceError{What: "JSON", Why: "no complete line"}
	}
	var rec struct {
		Kind   string          `json:"kind"`
		Source string          `json:"source"`
		Name   *string         `json:"name"`
		TS     json.RawMessage `json:"ts"`
	}
	if err := json.Unmarshal(ls[0], &rec); err != nil {
		return Result{}, &NotTraceError{What: "text", Why: "line 1: " + err.Error()}
	}
	if (rec.Kind == "input" && rec.Source == "events") || (rec.Kind == "user_event" && rec.Name != nil) {
		// docs/ndjson.md: 'iotap events record|read --json' (its input record
		// first, or a stream cut without it)
		return Result{Kind: Events, Format: "user_events NDJSON"}, nil
	}
	if rec.Kind == "input" {
		return Result{}, &NotTraceError{What: "iotap NDJSON", Why: "the --json output of an iotap " + rec.Source + " command, not user_events records"}
	}
	if rec.Name == nil || rec.TS == nil {
		return Result{}, &NotTraceError{What: "JSON", Why: `line 1 has no "name" and "ts": not a record of 'iotap events record --json'`}
	}
	return Result{Kind: Events, Format: "user_events NDJSON"}, nil
}

// Reason is what the input is and why it is not a trace, without the
// "not a trace: " prefix of Error ("text (line 3 is not ...)").
func (e *NotTraceError) Reason() string {
	return strings.TrimPrefix(e.Error(), "not "+e.Want.Name()+": ")
}
