// Package cdp is a minimal client of the Chrome DevTools Protocol, enough
// for tests to drive a headless Chromium: start the browser, open a page,
// send commands and receive events over the browser's WebSocket (flat
// sessions). It is internal: the tests of the HTML report use it.
package cdp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/websocket"
)

// Flags are the Chromium flags of a clean, quiet headless run: no GPU, no
// sandbox (root in CI), no background traffic of its own (so that every
// network request seen comes from the page), no first-run UI.
var Flags = []string{
	"--headless", "--no-sandbox", "--disable-gpu",
	"--disable-background-networking", "--disable-component-update", "--disable-sync",
	"--no-first-run", "--no-default-browser-check", "--disable-default-apps",
	"--disable-extensions", "--mute-audio", "--hide-scrollbars",
	"--remote-debugging-port=0", "--remote-allow-origins=*",
}

// Browser is a running Chromium and its DevTools connection.
type Browser struct {
	cmd     *exec.Cmd
	ws      *websocket.Conn
	profile string

	mu      sync.Mutex
	nextID  int64
	waiting map[int64]chan message
	events  []func(Event)
	err     error
	done    chan struct{}
}

// Event is a protocol event ("Network.requestWillBeSent", ...).
type Event struct {
	Method    string
	SessionID string
	Params    json.RawMessage
}

type message struct {
	ID        int64           `json:"id,omitempty"`
	Method    string          `json:"method,omitempty"`
	SessionID string          `json:"sessionId,omitempty"`
	Params    json.RawMessage `json:"params,omitempty"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error,omitempty"`
}

// Launch starts the Chromium at path with Flags and a fresh profile
// directory (removed by Close) and connects to it.
func Launch(ctx context.Context, path string, extra ...string) (*Browser, error) {
	profile, err := os.MkdirTemp("", "iotap-cdp-")
	if err != nil {
		return nil, err
	}
	args := append(append(append([]string{}, Flags...), "--user-data-dir="+profile), extra...)
	args = append(args, "about:blank")
	cmd := exec.Command(path, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(profile)
		return nil, err
	}
	b := &Browser{cmd: cmd, profile: profile, waiting: map[int64]chan message{}, done: make(chan struct{})}
	// Chromium prints "DevTools listening on ws://..." on stderr.
	urlc := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, u, ok := strings.Cut(sc.Text(), "DevTools listening on "); ok {
				urlc <- strings.TrimSpace(u)
				break
			}
		}
		io.Copy(io.Discard, stderr)
	}()
	var wsURL string
	select {
	case wsURL = <-urlc:
	case <-time.After(60 * time.Second):
		b.Close()
		return nil, errors.New("cdp: chromium did not print its DevTools address within 60 s")
	case <-ctx.Done():
		b.Close()
		return nil, ctx.Err()
	}
	cfg, err := websocket.NewConfig(wsURL, "http://localhost/")
	if err != nil {
		b.Close()
		return nil, err
	}
	ws, err := websocket.DialConfig(cfg)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("cdp: %w", err)
	}
	ws.MaxPayloadBytes = 512 << 20
	b.ws = ws
	go b.read()
	return b, nil
}

func (b *Browser) read() {
	defer close(b.done)
	for {
		var raw []byte
		if err := websocket.Message.Receive(b.ws, &raw); err != nil {
			b.mu.Lock()
			b.err = err
			for id, c := range b.waiting {
				close(c)
				delete(b.waiting, id)
			}
			b.mu.Unlock()
			return
		}
		var m message
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		b.mu.Lock()
		if m.ID != 0 {
			if c, ok := b.waiting[m.ID]; ok {
				c <- m
				delete(b.waiting, m.ID)
			}
			b.mu.Unlock()
			continue
		}
		hs := append([]func(Event){}, b.events...)
		b.mu.Unlock()
		for _, h := range hs {
			h(Event{Method: m.Method, SessionID: m.SessionID, Params: m.Params})
		}
	}
}

// OnEvent registers h for every event (called on the reader goroutine).
func (b *Browser) OnEvent(h func(Event)) {
	b.mu.Lock()
	b.events = append(b.events, h)
	b.mu.Unlock()
}

// Call sends a command (to a page session when session is not "") and
// decodes its result into result (when not nil).
func (b *Browser) Call(ctx context.Context, session, method string, params, result any) error {
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return fmt.Errorf("cdp: connection closed: %w", b.err)
	}
	b.nextID++
	id := b.nextID
	c := make(chan message, 1)
	b.waiting[id] = c
	b.mu.Unlock()
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	if params == nil {
		p = []byte("{}")
	}
	req, _ := json.Marshal(message{ID: id, Method: method, SessionID: session, Params: p})
	if err := websocket.Message.Send(b.ws, string(req)); err != nil {
		return fmt.Errorf("cdp: %s: %w", method, err)
	}
	select {
	case m, ok := <-c:
		if !ok {
			return fmt.Errorf("cdp: %s: connection closed", method)
		}
		if m.Error != nil {
			return fmt.Errorf("cdp: %s: %s (%d)", method, m.Error.Message, m.Error.Code)
		}
		if result != nil {
			return json.Unmarshal(m.Result, result)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cdp: %s: %w", method, ctx.Err())
	}
}

// NewPage opens a blank page and attaches to it; it returns the session
// id to pass to Call.
func (b *Browser) NewPage(ctx context.Context) (string, error) {
	var t struct {
		TargetID string `json:"targetId"`
	}
	if err := b.Call(ctx, "", "Target.createTarget", map[string]any{"url": "about:blank"}, &t); err != nil {
		return "", err
	}
	var s struct {
		SessionID string `json:"sessionId"`
	}
	if err := b.Call(ctx, "", "Target.attachToTarget", map[string]any{"targetId": t.TargetID, "flatten": true}, &s); err != nil {
		return "", err
	}
	return s.SessionID, nil
}

// Close ends the connection and the browser (the process it started) and
// removes the profile directory.
func (b *Browser) Close() error {
	exited := make(chan struct{})
	go func() { b.cmd.Wait(); close(exited) }()
	if b.ws != nil {
		// Browser.close ends Chromium with all its child processes.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		b.Call(ctx, "", "Browser.close", nil, nil)
		cancel()
		b.ws.Close()
		<-b.done
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		b.cmd.Process.Kill()
		<-exited
	}
	return os.RemoveAll(b.profile)
}
