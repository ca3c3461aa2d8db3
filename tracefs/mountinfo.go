package tracefs

import (
	"bytes"
	"fmt"
	"strings"
)

// Mount is one line of /proc/self/mountinfo, reduced to what iotap needs.
type Mount struct {
	MountPoint string
	FSType     string
	Source     string
}

// ParseMountinfo parses the contents of /proc/<pid>/mountinfo (see proc(5)).
// Malformed lines give an error with their line number.
func ParseMountinfo(data []byte) ([]Mount, error) {
	var out []Mount
	for n, line := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f := strings.Fields(string(line))
		sep := -1
		for i := 6; i < len(f); i++ {
			if f[i] == "-" {
				sep = i
				break
			}
		}
		if len(f) < 5 || sep < 0 || sep+2 >= len(f) {
			return nil, fmt.Errorf("mountinfo line %d: malformed: %q", n+1, line)
		}
		out = append(out, Mount{
			MountPoint: unescapeOctal(f[4]),
			FSType:     f[sep+1],
			Source:     unescapeOctal(f[sep+2]),
		})
	}
	return out, nil
}

// unescapeOctal undoes the \040-style escaping of mountinfo fields.
func unescapeOctal(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }
