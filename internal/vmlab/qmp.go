package vmlab

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// qmp is a minimal client of QEMU's machine protocol, used to run human
// monitor (HMP) commands for the guest's lab_monitor requests.
type qmp struct {
	conn net.Conn
	dec  *json.Decoder
}

type qmpReply struct {
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
	Event string `json:"event"`
	QMP   any    `json:"QMP"`
}

// dialQMP connects to the QMP socket at path, waiting up to wait for QEMU
// to create it, and negotiates capabilities.
func dialQMP(path string, wait time.Duration) (*qmp, error) {
	deadline := time.Now().Add(wait)
	var conn net.Conn
	var err error
	for {
		conn, err = net.Dial("unix", path)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("vmlab: qmp: %w", err)
	}
	q := &qmp{conn: conn, dec: json.NewDecoder(conn)}
	var greeting qmpReply
	if err := q.dec.Decode(&greeting); err != nil || greeting.QMP == nil {
		conn.Close()
		return nil, fmt.Errorf("vmlab: qmp: no greeting: %v", err)
	}
	if _, err := q.execute("qmp_capabilities", nil); err != nil {
		conn.Close()
		return nil, err
	}
	return q, nil
}

func (q *qmp) execute(cmd string, args any) (json.RawMessage, error) {
	req := map[string]any{"execute": cmd}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	q.conn.SetDeadline(time.Now().Add(30 * time.Second))
	defer q.conn.SetDeadline(time.Time{})
	if _, err := q.conn.Write(append(b, '\n')); err != nil {
		return nil, fmt.Errorf("vmlab: qmp %s: %w", cmd, err)
	}
	for {
		var r qmpReply
		if err := q.dec.Decode(&r); err != nil {
			return nil, fmt.Errorf("vmlab: qmp %s: %w", cmd, err)
		}
		if r.Event != "" {
			continue
		}
		if r.Error != nil {
			return nil, fmt.Errorf("vmlab: qmp %s: %s: %s", cmd, r.Error.Class, r.Error.Desc)
		}
		return r.Return, nil
	}
}

// hmp runs a human monitor command and returns its output.
func (q *qmp) hmp(line string) (string, error) {
	ret, err := q.execute("human-monitor-command", map[string]string{"command-line": line})
	if err != nil {
		return "", err
	}
	var out string
	if err := json.Unmarshal(ret, &out); err != nil {
		return "", fmt.Errorf("vmlab: qmp human-monitor-command: %w", err)
	}
	return strings.ReplaceAll(out, "\r\n", "\n"), nil
}

func (q *qmp) close() error { return q.conn.Close() }

// serveMonitorRequests answers the requests lab_monitor leaves in dir
// (<id>.req holds one HMP command line): it runs each once, in the order
// of their names, writes the output to <id>.txt and then the exit status
// ("0", or "1" when the monitor reported an error) to <id>.done. It
// returns the transcript lines of what it ran.
func serveMonitorRequests(q *qmp, dir string) ([]string, error) {
	reqs, err := filepath.Glob(filepath.Join(dir, "*.req"))
	if err != nil || len(reqs) == 0 {
		return nil, err
	}
	sort.Strings(reqs)
	var log []string
	for _, req := range reqs {
		b, err := os.ReadFile(req)
		if err != nil {
			return log, err
		}
		base := strings.TrimSuffix(req, ".req")
		if err := os.Rename(req, base+".taken"); err != nil {
			return log, err
		}
		line := strings.TrimSpace(string(b))
		out, err := q.hmp(line)
		status := "0"
		if err != nil {
			out, status = err.Error()+"\n", "1"
		} else if strings.HasPrefix(out, "Error") || strings.Contains(out, "\nError") {
			status = "1"
		}
		log = append(log, fmt.Sprintf("monitor %q -> %s %q", line, status, out))
		if err := os.WriteFile(base+".txt", []byte(out), 0o644); err != nil {
			return log, err
		}
		if err := os.WriteFile(base+".done", []byte(status+"\n"), 0o644); err != nil {
			return log, err
		}
	}
	return log, nil
}
