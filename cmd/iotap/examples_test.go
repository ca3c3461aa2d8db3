package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Every leaf command's help has an Examples section; every iotap command
// line in it names a real command whose flags parse and whose arguments
// are accepted (issue 16). Lines are split as a shell would (quotes,
// pipes, redirections, sudo): "ssh lab cat x | iotap report -" checks the
// iotap part.
func TestEveryLeafHasExamples(t *testing.T) {
	leaves := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if c.HasSubCommands() || !c.Runnable() || c.Hidden {
			return
		}
		leaves++
		path := c.CommandPath()
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s: no Example in its help", path)
			return
		}
		self := false
		for _, line := range exampleLines(c.Example) {
			for _, args := range iotapCommands(t, line) {
				got := checkExample(t, path, line, args)
				self = self || got == path
			}
		}
		if !self {
			t.Errorf("%s: no example runs %s itself:\n%s", path, path, c.Example)
		}
	}
	walk(newRootCmd(&env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}}))
	if leaves < 30 {
		t.Errorf("only %d leaf commands found", leaves)
	}
}

// checkExample parses one iotap command line (args without "iotap") with
// a fresh command tree and returns the path of the command it runs.
func checkExample(t *testing.T, where, line string, args []string) string {
	t.Helper()
	root := newRootCmd(&env{ctx: context.Background(), stdout: &bytes.Buffer{}, stderr: &bytes.Buffer{}})
	c, rest, err := root.Find(args)
	if err == nil && c == root && len(rest) > 0 && strings.HasPrefix(rest[0], "-") {
		// iotap --version, iotap --help
		root.InitDefaultHelpFlag()
		root.InitDefaultVersionFlag()
		if err := root.ParseFlags(rest); err != nil {
			t.Errorf("%s: example %q: %v", where, line, err)
		}
		return "iotap"
	}
	if err != nil || c == root || !c.Runnable() {
		t.Errorf("%s: example %q: not a command (%v)", where, line, err)
		return ""
	}
	if err := c.ParseFlags(rest); err != nil {
		t.Errorf("%s: example %q: %v", where, line, err)
		return c.CommandPath()
	}
	if err := c.ValidateArgs(c.Flags().Args()); err != nil {
		t.Errorf("%s: example %q: arguments: %v", where, line, err)
	}
	return c.CommandPath()
}

// exampleLines joins the lines continued with a backslash.
func exampleLines(ex string) []string {
	var out []string
	cur := ""
	for _, l := range strings.Split(ex, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		if l = cur + l; l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
		cur = ""
	}
	return out
}

// iotapCommands splits a shell line into its commands (at |, ||, &&, ;),
// drops redirections, "sudo" and VAR=value prefixes, and returns the
// arguments of those that run iotap.
func iotapCommands(t *testing.T, line string) [][]string {
	words, err := shellWords(line)
	if err != nil {
		t.Errorf("example %q: %v", line, err)
		return nil
	}
	var out [][]string
	var cur []string
	flush := func() {
		for len(cur) > 0 && (cur[0] == "sudo" || (strings.Contains(cur[0], "=") && !strings.HasPrefix(cur[0], "-"))) {
			cur = cur[1:]
		}
		if len(cur) > 0 && cur[0] == "iotap" {
			out = append(out, cur[1:])
		}
		cur = nil
	}
	for i := 0; i < len(words); i++ {
		w := words[i]
		switch {
		case w.op && (w.s == "|" || w.s == "||" || w.s == "&&" || w.s == ";"):
			flush()
		case w.op: // a redirection: its target follows unless attached
			if w.s == ">" || w.s == "<" || w.s == ">>" || w.s == "2>" || w.s == "2>>" {
				i++
			}
		default:
			cur = append(cur, w.s)
		}
	}
	flush()
	return out
}

type shellWord struct {
	s  string
	op bool // an operator (|, &&, ;, a redirection), not a word
}

// shellWords splits a line as sh does for simple commands: blanks
// separate words, '...' and "..." quote, and |, ||, &&, ;, <, >, >>, 2>
// are operators.
func shellWords(line string) ([]shellWord, error) {
	var out []shellWord
	var b strings.Builder
	in := false // inside a word
	word := func() {
		if in {
			out = append(out, shellWord{s: b.String()})
			b.Reset()
			in = false
		}
	}
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case c == ' ' || c == '\t':
			word()
		case c == '#' && !in:
			word()
			return out, nil // a comment to the end of the line
		case c == '\'' || c == '"':
			j := strings.IndexByte(line[i+1:], c)
			if j < 0 {
				return nil, errUnterminated
			}
			b.WriteString(line[i+1 : i+1+j])
			in = true
			i += j + 1
		case c == '|' || c == '&' || c == ';' || c == '<' || c == '>':
			if c == '>' && in && b.String() == "2" {
				b.Reset()
				in = false
				op := "2>"
				if i+1 < len(line) && line[i+1] == '>' {
					op, i = "2>>", i+1
				}
				out = append(out, shellWord{s: op, op: true})
				continue
			}
			word()
			op := string(c)
			if i+1 < len(line) && (line[i+1] == c) && c != ';' && c != '<' {
				op += string(c)
				i++
			}
			if op == "&" {
				op = ";" // background: the next command starts
			}
			out = append(out, shellWord{s: op, op: true})
		default:
			b.WriteByte(c)
			in = true
		}
	}
	word()
	return out, nil
}

var errUnterminated = errorString("unterminated quote")

type errorString string

func (e errorString) Error() string { return string(e) }

// The example splitter itself.
func TestIotapCommands(t *testing.T) {
	for _, tc := range []struct {
		line string
		want string // commands joined by " / ", words by ","
	}{
		{"iotap usb read x.pcapng", "usb,read,x.pcapng"},
		{"ssh lab cat /tmp/u.pcapng | iotap report - -o u.html", "report,-,-o,u.html"},
		{"sudo iotap mmio capture -o - | iotap mmio stats -", "mmio,capture,-o,- / mmio,stats,-"},
		{"iotap report a b --format html -o -  > report.html", "report,a,b,--format,html,-o,-"},
		{"iotap events record 'a u32 x; u64 y' -o f 2>/dev/null", "events,record,a u32 x; u64 y,-o,f"},
		{`iotap x --json | jq 'select(.kind == "endpoint")'`, "x,--json"},
		{"IOTAP=1 iotap doctor && echo ok", "doctor"},
		{"iotap usb capture -o u.pcapng    # until Ctrl-C", "usb,capture,-o,u.pcapng"},
		{"iotap a#b", "a#b"},
	} {
		var parts []string
		for _, c := range iotapCommands(t, tc.line) {
			parts = append(parts, strings.Join(c, ","))
		}
		if got := strings.Join(parts, " / "); got != tc.want {
			t.Errorf("%q: got %q, want %q", tc.line, got, tc.want)
		}
	}
}
