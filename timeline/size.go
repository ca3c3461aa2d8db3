package timeline

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ParseSize reads a size as --max-size takes it: bytes (1000), or a
// number with a unit: K, M, G or KiB, MiB, GiB (binary), KB, MB, GB
// (decimal), B.
func ParseSize(v string) (int64, error) {
	t := strings.TrimSpace(v)
	mult := int64(1)
	for _, u := range []struct {
		suf  string
		mult int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9},
		{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"B", 1}} {
		if strings.HasSuffix(t, u.suf) {
			t, mult = strings.TrimSuffix(t, u.suf), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(t), 10, 64)
	if err != nil || n < 0 || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("%q is not a size (bytes, or a number with K, M, G, KiB, MiB, GiB, KB, MB, GB)", v)
	}
	return n * mult, nil
}

// FormatSize writes n bytes in the largest binary unit that divides it
// (256MiB), else in bytes: ParseSize reads it back.
func FormatSize(n int64) string {
	for _, u := range []struct {
		n    string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return fmt.Sprintf("%d%s", n/u.size, u.n)
		}
	}
	return fmt.Sprint(n)
}

// Size is a byte count that reads and writes itself as ParseSize and
// FormatSize do: a flag.Value (and a pflag.Value) for a size option.
type Size int64

func (s *Size) String() string { return FormatSize(int64(*s)) }

// Type names the value in a command's help.
func (s *Size) Type() string { return "size" }

// Set parses v (ParseSize).
func (s *Size) Set(v string) error {
	n, err := ParseSize(v)
	if err == nil {
		*s = Size(n)
	}
	return err
}
