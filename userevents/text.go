package userevents

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// TextReader reads events of one format from the text of trace_pipe (or
// trace). Linux prints user events field by field ("a=(1) b=0x2 (2)
// s=text"): integers as hex with the decimal in parentheses, 1-byte
// integers as 'c'(N), strings raw. A string containing " NEXTFIELD=" is
// ambiguous in that text; the binary per-CPU buffers (Recorder) are the
// reliable path. Timestamps have the microsecond resolution of the text.
type TextReader struct {
	sc     *bufio.Scanner
	f      *Format
	fields []*FormatField
	rec    Recorded
	line   int
	tag    string
}

// NewTextReader reads r for events of f.
func NewTextReader(r io.Reader, f *Format) *TextReader {
	t := &TextReader{sc: bufio.NewScanner(r), f: f, tag: " " + f.Name + ": "}
	t.sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for i := range f.Fields {
		if !f.Fields[i].Common {
			t.fields = append(t.fields, &f.Fields[i])
		}
	}
	t.rec.Name, t.rec.Format = f.Name, f
	return t
}

// Next returns the next event of the format, skipping other lines. The
// event and its values are reused by the next call.
func (t *TextReader) Next() (*Recorded, error) {
	for t.sc.Scan() {
		t.line++
		line := t.sc.Text()
		if strings.HasPrefix(line, "#") || !strings.Contains(line, t.tag) {
			continue
		}
		if err := t.parse(line); err != nil {
			return nil, &FormatError{Line: t.line, Msg: err.Error()}
		}
		return &t.rec, nil
	}
	if err := t.sc.Err(); err != nil {
		return nil, err
	}
	return nil, io.EOF
}

func (t *TextReader) parse(line string) error {
	i := strings.Index(line, t.tag)
	head, body := line[:i], line[i+len(t.tag):]
	// head: "  COMM-PID  [CPU] FLAGS  SECONDS.FRACTION:"
	lb, rb := strings.IndexByte(head, '['), strings.IndexByte(head, ']')
	if lb < 0 || rb < lb {
		return fmt.Errorf("no [cpu] in %q", head)
	}
	task := strings.TrimSpace(head[:lb])
	dash := strings.LastIndexByte(task, '-')
	pid, err := strconv.Atoi(task[dash+1:])
	if dash < 0 || err != nil {
		return fmt.Errorf("no pid in %q", task)
	}
	cpu, err := strconv.Atoi(head[lb+1 : rb])
	if err != nil {
		return fmt.Errorf("bad cpu %q", head[lb+1:rb])
	}
	rest := strings.Fields(head[rb+1:])
	if len(rest) == 0 {
		return fmt.Errorf("no timestamp in %q", head)
	}
	ts, err := parseTextTS(strings.TrimSuffix(rest[len(rest)-1], ":"))
	if err != nil {
		return err
	}
	t.rec.PID, t.rec.CPU, t.rec.TS = int32(pid), cpu, ts
	t.rec.Values = t.rec.Values[:0]
	for k, ff := range t.fields {
		prefix := ff.Name + "="
		if !strings.HasPrefix(body, prefix) {
			return fmt.Errorf("field %s: want %q at %q", ff.Name, prefix, body)
		}
		body = body[len(prefix):]
		val := body
		if k+1 < len(t.fields) {
			next := " " + t.fields[k+1].Name + "="
			j := strings.Index(body, next)
			if j < 0 {
				return fmt.Errorf("field %s: no %q after it", ff.Name, next[1:])
			}
			val, body = body[:j], body[j+1:]
		}
		v, err := textValue(ff, val)
		if err != nil {
			return fmt.Errorf("field %s: %v", ff.Name, err)
		}
		t.rec.Values = append(t.rec.Values, v)
	}
	return nil
}

func parseTextTS(s string) (uint64, error) {
	sec, frac, _ := strings.Cut(s, ".")
	n, err := strconv.ParseUint(sec, 10, 64)
	if err != nil || len(frac) > 9 {
		return 0, fmt.Errorf("bad timestamp %q", s)
	}
	ns := uint64(0)
	if frac != "" {
		f, err := strconv.ParseUint(frac, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bad timestamp %q", s)
		}
		for i := len(frac); i < 9; i++ {
			f *= 10
		}
		ns = f
	}
	return n*1e9 + ns, nil
}

// textValue decodes one printed field value.
func textValue(ff *FormatField, s string) (Value, error) {
	v := Value{Field: ff}
	switch ff.Kind {
	case KindInt, KindUint:
		num := s
		if l, r := strings.LastIndexByte(s, '('), strings.LastIndexByte(s, ')'); l >= 0 && r > l {
			num = s[l+1 : r]
		}
		var u uint64
		if i, err := strconv.ParseInt(num, 0, 64); err == nil {
			u = uint64(i)
		} else if x, err := strconv.ParseUint(num, 0, 64); err == nil {
			u = x
		} else {
			return v, fmt.Errorf("bad number %q", s)
		}
		if ff.Size < 8 {
			u &= 1<<(8*uint(ff.Size)) - 1
		}
		shift := uint(64 - 8*ff.Size)
		v.Uint = u
		v.Int = int64(u<<shift) >> shift
		if ff.Kind == KindUint {
			v.Int = int64(u)
		}
	default:
		v.Bytes = []byte(s)
	}
	return v, nil
}
