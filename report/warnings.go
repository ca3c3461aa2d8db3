package report

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/iotap/iotap/timeline"
)

// InputClocks returns the clocks of each trace read from a directory with
// a clocks.json (an 'iotap capture' directory), by the trace's Path: a
// clocks.json aligns the traces of its own directory, not the others. It
// is timeline.Options.InputClocks for the report's traces.
func (r *Report) InputClocks() (map[string]*timeline.Clocks, error) {
	byDir := map[string]*timeline.Clocks{}
	for _, p := range r.Clocks {
		c, err := timeline.LoadClocks(p.Path)
		if err != nil {
			return nil, err
		}
		byDir[filepath.Dir(p.Path)] = c
	}
	out := map[string]*timeline.Clocks{}
	for _, t := range r.Traces {
		if c, ok := byDir[filepath.Dir(t.Path)]; ok {
			out[t.Path] = c
		}
	}
	return out, nil
}

// FoldWarnings turns warnings of the form "INPUT: message" into one line
// per message with the number of inputs ("6 inputs: message (-v lists
// them)"), the most frequent first; a message of one input keeps its
// line, and other warnings are kept as they are, first.
func FoldWarnings(ws []string) []string {
	count := map[string]int{}
	var order, out []string
	for _, w := range ws {
		_, msg, ok := strings.Cut(w, ": ")
		if !ok {
			out = append(out, w)
			continue
		}
		if count[msg] == 0 {
			order = append(order, msg)
		}
		count[msg]++
	}
	sort.SliceStable(order, func(i, j int) bool { return count[order[i]] > count[order[j]] })
	for _, msg := range order {
		if count[msg] == 1 {
			for _, w := range ws {
				if strings.HasSuffix(w, ": "+msg) {
					out = append(out, w)
					break
				}
			}
			continue
		}
		out = append(out, fmt.Sprintf("%d inputs: %s (-v lists them)", count[msg], msg))
	}
	return out
}
