package userevents

// Tests named TestLab* run only inside the QEMU lab guest (IOTAP_IN_VM=1),
// against the real Linux 6.12 user_events; vm_test.go boots the guest and
// runs them there.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	iunix "github.com/iotap/iotap/internal/unix"
	"github.com/iotap/iotap/internal/vmlab"
	"github.com/iotap/iotap/tracefs"
)

func labFS(t *testing.T) *tracefs.FS {
	t.Helper()
	if !vmlab.InVM() {
		t.Skip("lab test: runs inside the QEMU lab (go test -run TestVM ./userevents)")
	}
	f, err := tracefs.Find()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func labProducer(t *testing.T) (*tracefs.FS, *Producer) {
	f := labFS(t)
	p, err := OpenFS(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return f, p
}

// saveOut copies a file to /out for the host (golden files).
func saveOut(t *testing.T, name string, b []byte) {
	if err := os.WriteFile(filepath.Join("/out", name), b, 0o644); err != nil {
		t.Logf("save %s: %v", name, err)
	}
}

func waitEnabled(e *Event, want bool) bool {
	for i := 0; i < 1000; i++ {
		if e.Enabled() == want {
			return true
		}
		time.Sleep(time.Millisecond)
	}
	return false
}

func TestLabRegisterEnable(t *testing.T) {
	f, p := labProducer(t)
	e, err := p.Register("iotap_lab_en u32 a; char[16] b; __rel_loc char[] s")
	if err != nil {
		t.Fatal(err)
	}
	if e.Enabled() {
		t.Fatal("enabled before any tracer attached")
	}
	st, err := ReadStatus(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := f.ReadFile("user_events_status")
	saveOut(t, "status_idle.txt", raw)
	if se, ok := st.Event("iotap_lab_en"); !ok || len(se.UsedBy) != 0 {
		t.Fatalf("status %+v: event missing or busy", st)
	}
	if err := e.Write(1, "x", "y"); !errors.Is(err, ErrNotEnabled) || !errors.Is(err, syscall.EBADF) {
		t.Fatalf("write while disabled: %v, want ErrNotEnabled (EBADF)", err)
	}

	ff, err := ReadFormat(f, System, "iotap_lab_en")
	if err != nil {
		t.Fatal(err)
	}
	fb, _ := f.ReadFile("events", System, "iotap_lab_en", "format")
	saveOut(t, "format_iotap_lab_en.txt", fb)
	if !ff.Matches(e.Schema()) {
		t.Fatalf("kernel format does not match the schema:\n%s", fb)
	}

	for round := 0; round < 3; round++ {
		if err := Enable(f, System, "iotap_lab_en", true); err != nil {
			t.Fatal(err)
		}
		if !waitEnabled(e, true) {
			t.Fatalf("round %d: enable bit not set after enabling through tracefs", round)
		}
		st, _ = ReadStatus(f)
		if se, _ := st.Event("iotap_lab_en"); strings.Join(se.UsedBy, ",") != "ftrace" {
			t.Fatalf("status while enabled: %+v", se)
		}
		if round == 0 {
			raw, _ := f.ReadFile("user_events_status")
			saveOut(t, "status_busy.txt", raw)
		}
		if err := e.Write(uint32(round), "abc", "hello"); err != nil {
			t.Fatalf("write while enabled: %v", err)
		}
		if err := Enable(f, System, "iotap_lab_en", false); err != nil {
			t.Fatal(err)
		}
		if !waitEnabled(e, false) {
			t.Fatalf("round %d: enable bit still set after disabling", round)
		}
	}
	if err := e.Unregister(); err != nil {
		t.Fatal(err)
	}
	if err := Enable(f, System, "iotap_lab_en", true); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	if e.Enabled() || atomic.LoadUint32(e.slot) != 0 {
		t.Fatal("unregistered event still follows the tracer")
	}
	Enable(f, System, "iotap_lab_en", false)
}

type labRec struct {
	G   uint32
	Seq uint32
	Msg string `userevents:"msg"`
}

// TestLabWriteReadBack writes 100 000 events from 4 goroutines and reads
// every one back, decoded, from the per-CPU binary buffers.
func TestLabWriteReadBack(t *testing.T) {
	f, p := labProducer(t)
	ev, err := RegisterStruct[labRec](p, "iotap_lab_rt", 0)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := p.Register("iotap_lab_rt2 s64 v; char[8] tag")
	if err != nil {
		t.Fatal(err)
	}
	// 100 000 records of ~56 bytes: 8 MiB per CPU holds them all even if
	// the reader stalls.
	r, err := NewRecorder(f, 8192)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, n := range []string{"iotap_lab_rt", "iotap_lab_rt2"} {
		if _, err := r.Add(System, n); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	if !waitEnabled(ev.Event, true) || !waitEnabled(plain, true) {
		t.Fatal("recorder did not enable the events")
	}
	const writers, per = 4, 25000
	seen := make([][]bool, writers)
	for i := range seen {
		seen[i] = make([]bool, per)
	}
	var bad []string
	var plainSeen int
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- r.Run(ctx, func(rec *Recorded) error {
			if rec.Name == "iotap_lab_rt2" {
				if rec.Values[0].Int != -7 || string(rec.Values[1].Bytes) != "tag" {
					bad = append(bad, fmt.Sprintf("rt2 %v", rec.Values))
				}
				plainSeen++
				return nil
			}
			g, seq, msg := rec.Values[0].Uint, rec.Values[1].Uint, string(rec.Values[2].Bytes)
			if g >= writers || seq >= per || msg != fmt.Sprintf("g%d-%d", g, seq) || rec.PID <= 0 {
				bad = append(bad, fmt.Sprintf("g=%d seq=%d msg=%q pid=%d", g, seq, msg, rec.PID))
				return nil
			}
			if seen[g][seq] {
				bad = append(bad, fmt.Sprintf("duplicate g=%d seq=%d", g, seq))
			}
			seen[g][seq] = true
			return nil
		})
	}()
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for g := 0; g < writers; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			v := labRec{G: uint32(g)}
			for i := 0; i < per; i++ {
				v.Seq = uint32(i)
				v.Msg = "g" + strconv.Itoa(g) + "-" + strconv.Itoa(i)
				if err := ev.Write(&v); err != nil {
					errs <- err
					return
				}
			}
		}(g)
	}
	wg.Wait()
	if err := plain.Write(-7, "tag"); err != nil {
		t.Fatal(err)
	}
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	t.Logf("recorder: %+v", st)
	if len(bad) > 0 {
		t.Fatalf("%d bad records, first: %v", len(bad), bad[0])
	}
	missing := 0
	for g := range seen {
		for _, ok := range seen[g] {
			if !ok {
				missing++
			}
		}
	}
	if missing != 0 || st.Lost() != 0 || plainSeen != 1 {
		t.Fatalf("missing %d of %d, lost %d, plain %d", missing, writers*per, st.Lost(), plainSeen)
	}
}

// TestLabGoldenPage captures a real ring-buffer page for the unit tests.
func TestLabGoldenPage(t *testing.T) {
	f, p := labProducer(t)
	e, err := p.Register("iotap_lab_pg u32 a; s16 b; __rel_loc char[] s; char[6] c")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Add(System, "iotap_lab_pg"); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	strs := []string{"", "a", "hello world", strings.Repeat("long", 40)}
	for i, s := range strs {
		if err := e.Write(uint32(i), -i, s, "c"+strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(3 * time.Millisecond) // time deltas, maybe an extend
	}
	r.setEnabled(false)
	// The writing goroutine may have moved between CPUs: read every CPU.
	var recs []RawRecord
	for i, fd := range r.fds {
		for {
			page := make([]byte, 4096)
			n, err := iunix.Read(fd.Int(), page)
			if err != nil || n == 0 {
				break
			}
			if n != 4096 {
				t.Fatalf("read %d bytes of trace_pipe_raw", n)
			}
			_, rs, err := DecodePage(page, DefaultPageLayout, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) > 0 {
				saveOut(t, fmt.Sprintf("page_iotap_lab_pg_cpu%d.bin", r.cpus[i]), page)
			}
			recs = append(recs, rs...)
		}
	}
	sort.Slice(recs, func(i, j int) bool { return recs[i].TS < recs[j].TS })
	fb, _ := f.ReadFile("events", System, "iotap_lab_pg", "format")
	saveOut(t, "format_iotap_lab_pg.txt", fb)
	hp, _ := f.ReadFile("events", "header_page")
	saveOut(t, "header_page.txt", hp)
	he, _ := f.ReadFile("events", "header_event")
	saveOut(t, "header_event.txt", he)
	ff, err := ParseFormat(fb)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(strs) {
		t.Fatalf("decoded %d records, want %d", len(recs), len(strs))
	}
	for i, rec := range recs {
		vals, err := ff.Decode(rec.Data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if vals[0].Uint != uint64(i) || vals[1].Int != int64(-i) || string(vals[2].Bytes) != strs[i] || string(vals[3].Bytes) != "c"+strconv.Itoa(i) {
			t.Fatalf("record %d: %v", i, vals)
		}
		if i > 0 && rec.TS <= recs[i-1].TS {
			t.Fatalf("timestamps not increasing: %d then %d", recs[i-1].TS, rec.TS)
		}
	}
}

// TestLabErrors provokes every kernel error the package maps.
func TestLabErrors(t *testing.T) {
	f, p := labProducer(t)
	if _, err := p.Register("iotap_lab_err u32 a"); err != nil {
		t.Fatal(err)
	}
	// Same name, other fields: EADDRINUSE.
	_, err := p.Register("iotap_lab_err u64 a")
	if !errors.Is(err, ErrNameInUse) || !errors.Is(err, syscall.EADDRINUSE) {
		t.Errorf("same name, other fields: %v", err)
	}
	// Same name, other fields, multi-format: accepted on 6.10+.
	mf, err := p.RegisterSchema(mustSchema(t, "iotap_lab_err u64 a"), MultiFormat)
	if err != nil {
		t.Errorf("multi-format: %v", err)
	} else if mf.Flags()&MultiFormat == 0 {
		t.Errorf("multi-format flag not granted on 6.12")
	} else if sys, name, err := Tracepoint(f, mf.Schema(), mf.Flags()); err != nil || sys != MultiSystem || !strings.HasPrefix(name, "iotap_lab_err.") {
		t.Errorf("multi-format tracepoint: %s/%s %v", sys, name, err)
	}
	// Unknown flag: the kernel's EINVAL, reached only through the raw ioctl.
	word, _ := p.allocWord()
	name := []byte("iotap_lab_err2 u32 a\x00")
	reg := iunix.UserReg{Size: iunix.SizeofUserReg, EnableSize: 4, Flags: 1 << 7,
		EnableAddr: uint64(uintptr(unsafe.Pointer(word))), NameArgs: uint64(uintptr(unsafe.Pointer(&name[0])))}
	var rerr error
	p.do(func() { rerr = iunix.UserEventsRegister(p.raw, &reg, name) })
	if err := kernelError("register", "x", rerr); !errors.Is(err, ErrInvalid) || !errors.Is(err, syscall.EINVAL) {
		t.Errorf("unknown flag: %v", err)
	}
	// Same enable word twice: EADDRINUSE (never done by Register).
	reg.Flags = 0
	p.do(func() {
		if rerr = iunix.UserEventsRegister(p.raw, &reg, name); rerr == nil {
			rerr = iunix.UserEventsRegister(p.raw, &reg, name)
		}
	})
	if !errors.Is(rerr, syscall.EADDRINUSE) {
		t.Errorf("same word twice: %v", rerr)
	}
	p.do(func() {
		u := iunix.UserUnreg{Size: iunix.SizeofUserUnreg, DisableAddr: reg.EnableAddr}
		iunix.UserEventsUnregister(p.raw, &u)
	})
	// Bad write index: ENOENT.
	bogus := &Event{p: p, schema: mustSchema(t, "x u32 a"), idx: 9999}
	bogus.pool.New = func() any { return new(writeBuf) }
	if err := bogus.Write(1); !errors.Is(err, ErrBadIndex) || !errors.Is(err, syscall.ENOENT) {
		t.Errorf("bad write index: %v", err)
	}
	// A string without NUL: refused before the kernel; the kernel itself
	// answers EFAULT, which we show by bypassing the check.
	s, err := p.Register("iotap_lab_str __rel_loc char[] s")
	if err != nil {
		t.Fatal(err)
	}
	Enable(f, System, "iotap_lab_str", true)
	defer Enable(f, System, "iotap_lab_str", false)
	waitEnabled(s, true)
	payload := []byte{0, 0, 3, 0, 'a', 'b', 'c'} // rel_loc: 3 bytes at offset 0, no NUL
	if err := s.WriteRaw(payload); !errors.Is(err, ErrPayload) || errors.Is(err, syscall.EFAULT) {
		t.Errorf("no NUL, checked: %v", err)
	}
	if err := s.writeBytes(payload); !errors.Is(err, ErrPayload) || !errors.Is(err, syscall.EFAULT) {
		t.Errorf("no NUL, unchecked: %v (want the kernel's EFAULT)", err)
	}
	if err := s.Write("a\x00b"); !errors.Is(err, ErrPayload) {
		t.Errorf("NUL inside: %v", err)
	}
	if err := s.Write(strings.Repeat("x", MaxPayload)); !errors.Is(err, ErrPayload) {
		t.Errorf("oversize: %v", err)
	}
	if err := s.Write("ok"); err != nil {
		t.Errorf("valid write: %v", err)
	}
	// Unregister of an address never registered: ENOENT.
	u := iunix.UserUnreg{Size: iunix.SizeofUserUnreg, DisableAddr: 8}
	p.do(func() { rerr = iunix.UserEventsUnregister(p.raw, &u) })
	if err := kernelError("unregister", "x", rerr); !errors.Is(err, ErrNotFound) {
		t.Errorf("unregister unknown: %v", err)
	}
	// Delete while registered: EBUSY; unknown: ENOENT.
	if err := p.Delete("iotap_lab_err"); !errors.Is(err, ErrBusy) || !errors.Is(err, syscall.EBUSY) {
		t.Errorf("delete busy: %v", err)
	}
	if err := p.Delete("iotap_lab_nosuch"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete unknown: %v", err)
	}
	// EMFILE: lower kernel.user_events_max to what exists.
	st, _ := ReadStatus(f)
	old, _ := os.ReadFile("/proc/sys/kernel/user_events_max")
	if err := os.WriteFile("/proc/sys/kernel/user_events_max", []byte(strconv.Itoa(st.Active)), 0); err != nil {
		t.Errorf("user_events_max: %v", err)
	} else {
		_, err := p.Register("iotap_lab_toomany u32 a")
		os.WriteFile("/proc/sys/kernel/user_events_max", old, 0)
		if !errors.Is(err, ErrTooManyEvents) || !errors.Is(err, syscall.EMFILE) {
			t.Errorf("over user_events_max: %v", err)
		}
	}
	// Persist: works as root; delete needs it gone from every descriptor.
	pe, err := p.RegisterSchema(mustSchema(t, "iotap_lab_persist u32 a"), Persist)
	if err != nil || pe.Flags()&Persist == 0 {
		t.Fatalf("persist as root: %v", err)
	}
	// EPERM: persist without CAP_PERFMON, from a child running as nobody.
	dataPath, _ := f.Path("user_events_data")
	os.Chmod(dataPath, 0o666)
	defer os.Chmod(dataPath, 0o640)
	if fi, err := os.Stat(f.Root()); err == nil {
		os.Chmod(f.Root(), 0o755)
		defer os.Chmod(f.Root(), fi.Mode().Perm())
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLabHelperPersist$")
	cmd.Env = append(os.Environ(), "IOTAP_UE_HELPER=persist")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "EPERM-OK") {
		t.Errorf("persist as nobody: %v\n%s", err, out)
	}
	// Close our descriptor, then the persistent event can be deleted.
	if err := p.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if err := deleteEventually(t, f, "iotap_lab_persist"); err != nil {
		t.Errorf("delete persistent event after close: %v", err)
	}
	if err := DeleteFS(f, "iotap_lab_persist"); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
	if err := pe.Write(1); !errors.Is(err, ErrClosed) {
		t.Errorf("write after close: %v", err)
	}
	if pe.Enabled() {
		t.Error("closed producer's event reports enabled")
	}
}

// TestLabHelperPersist runs as nobody, started by TestLabErrors.
func TestLabHelperPersist(t *testing.T) {
	if os.Getenv("IOTAP_UE_HELPER") != "persist" {
		t.Skip("helper")
	}
	p, err := Open()
	if err != nil {
		fmt.Println("open:", err)
		t.Fatal(err)
	}
	defer p.Close()
	_, err = p.RegisterSchema(mustSchema(t, "iotap_lab_persist2 u32 a"), Persist)
	if errors.Is(err, ErrPermission) && errors.Is(err, syscall.EPERM) {
		fmt.Println("EPERM-OK", err)
		return
	}
	fmt.Println("unexpected:", err)
	t.Fatal(err)
}

// TestLabFork checks the documented fork and exec semantics.
func TestLabFork(t *testing.T) {
	f, p := labProducer(t)
	e, err := p.Register("iotap_lab_fork u32 v")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(f, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Add(System, "iotap_lab_fork"); err != nil {
		t.Fatal(err)
	}
	// The child waits for its copy of the enable word to be set, writes
	// through the inherited descriptor, then waits for the word to clear.
	payload := uint32(4242)
	idx := e.idx
	iov := []iunix.Iovec{{Base: (*byte)(unsafe.Pointer(&idx))}, {Base: (*byte)(unsafe.Pointer(&payload))}}
	iov[0].SetLen(4)
	iov[1].SetLen(4)
	// Fork on the control thread, which holds the registrations.
	var pid int
	p.do(func() { pid, err = iunix.ForkProbe(e.slot, p.raw, iov, iunix.ProbeFollow, 20000, nil) })
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var childPID atomic.Int32
	go func() {
		time.Sleep(300 * time.Millisecond)
		for i := 0; i < 200 && childPID.Load() == 0; i++ {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	if err := r.Run(ctx, func(rec *Recorded) error {
		if rec.Values[0].Uint == 4242 {
			childPID.Store(rec.PID)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	code, err := iunix.WaitExit(pid)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Fatalf("fork child exit %d (10: never saw the enable bit, 11: write failed, 12: never saw it clear)", code)
	}
	if childPID.Load() != int32(pid) {
		t.Fatalf("event from the child: pid %d, want %d", childPID.Load(), pid)
	}

	// A forked child keeps a registration (and so the event) alive after
	// the parent unregistered and closed, even with its copy of the
	// descriptor closed; a child that called exec does not.
	for _, mode := range []int{iunix.ProbeCloseSleep, iunix.ProbeExec} {
		name := "iotap_lab_forkp" + strconv.Itoa(mode)
		p2, err := OpenFS(f)
		if err != nil {
			t.Fatal(err)
		}
		pe, err := p2.RegisterSchema(mustSchema(t, name+" u32 v"), Persist)
		if err != nil {
			t.Fatal(err)
		}
		argv := []*byte{cstr("/bin/sleep"), cstr("4"), nil}
		var pid int
		p2.do(func() { pid, err = iunix.ForkProbe(pe.slot, p2.raw, nil, mode, 3000, argv) })
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(300 * time.Millisecond) // let the child close or exec
		if err := p2.Close(); err != nil { // unregisters and closes
			t.Fatal(err)
		}
		// Busy for 2 s while a forked child lives (4 s); free at once
		// (give or take an RCU grace period) with an exec'd child.
		err = deleteEventually(t, f, name)
		if mode == iunix.ProbeCloseSleep && !errors.Is(err, ErrBusy) {
			t.Errorf("delete while a forked child holds the registration: %v, want ErrBusy", err)
		}
		if mode == iunix.ProbeExec && err != nil {
			t.Errorf("delete while an exec'd child runs: %v, want success (exec drops registrations)", err)
		}
		iunix.WaitExit(pid)
		if mode == iunix.ProbeCloseSleep {
			// Gone with the child (released asynchronously).
			for i := 0; i < 100; i++ {
				if err = DeleteFS(f, name); err == nil {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			if err != nil {
				t.Errorf("delete after the forked child exited: %v", err)
			}
		}
	}
}

// deleteEventually retries a busy delete for 2 s: the kernel drops the
// references of an exiting or exec'ing task after an RCU grace period.
func deleteEventually(t *testing.T, f *tracefs.FS, name string) error {
	var err error
	for i := 0; i < 100; i++ {
		if err = DeleteFS(f, name); !errors.Is(err, ErrBusy) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
	st, _ := f.ReadFile("user_events_status")
	dyn, _ := f.ReadFile("dynamic_events")
	t.Logf("still busy: status:\n%s\ndynamic_events:\n%s", st, dyn)
	return err
}

func cstr(s string) *byte {
	b := append([]byte(s), 0)
	return &b[0]
}

// TestLabLoss overflows a tiny ring buffer and checks that every event is
// either read or counted as lost.
func TestLabLoss(t *testing.T) {
	f, p := labProducer(t)
	e, err := p.Register("iotap_lab_loss u32 n; char[32] pad")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRecorder(f, 4) // one page per CPU
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if _, err := r.Add(System, "iotap_lab_loss"); err != nil {
		t.Fatal(err)
	}
	if err := r.Start(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5000; i++ {
		if err := e.Write(uint32(i), "x"); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // drain what is left and stop
	n := 0
	if err := r.Run(ctx, func(*Recorded) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	st := r.Stats()
	t.Logf("read %d, stats %+v", n, st)
	if st.Lost() == 0 {
		t.Fatal("no loss reported after overflowing a one-page buffer")
	}
	if uint64(n)+st.Lost() != 5000 {
		t.Fatalf("read %d + lost %d != 5000 written", n, st.Lost())
	}
}

// TestLabTracePipe reads events back from the text trace_pipe, parsed with
// the format file.
func TestLabTracePipe(t *testing.T) {
	f, p := labProducer(t)
	e, err := p.Register("iotap_lab_txt u8 a; s32 b; u64 c; char[12] d; __rel_loc char[] s; s16 n")
	if err != nil {
		t.Fatal(err)
	}
	ff, err := ReadFormat(f, System, "iotap_lab_txt")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteFile([]byte{}, "trace") // clear the top-level buffer
	if err := Enable(f, System, "iotap_lab_txt", true); err != nil {
		t.Fatal(err)
	}
	defer Enable(f, System, "iotap_lab_txt", false)
	waitEnabled(e, true)
	vals := [][]any{
		{200, -5, uint64(1) << 40, "tag", "hello world", -1},
		{0, 7, 0, "", "", 0},
		{1, 2, 3, "a b=c", "x=1 y", 4},
	}
	for _, v := range vals {
		if err := e.Write(v...); err != nil {
			t.Fatal(err)
		}
	}
	tr, _ := f.ReadFile("trace")
	saveOut(t, "trace_iotap_lab_txt.txt", tr)
	fb, _ := f.ReadFile("events", System, "iotap_lab_txt", "format")
	saveOut(t, "format_iotap_lab_txt.txt", fb)
	pipe, err := os.Open(filepath.Join(f.Root(), "trace_pipe"))
	if err != nil {
		t.Fatal(err)
	}
	defer pipe.Close()
	tp := NewTextReader(pipe, ff)
	for i, v := range vals {
		rec, err := tp.Next()
		if err != nil {
			t.Fatalf("event %d: %v\ntrace:\n%s", i, err, tr)
		}
		got := fmt.Sprint(rec.Values[0].Any(), rec.Values[1].Any(), rec.Values[2].Any(), rec.Values[3].Any(), rec.Values[4].Any(), rec.Values[5].Any())
		want := fmt.Sprint(v...)
		if got != want || rec.PID <= 0 {
			t.Errorf("event %d: %s (pid %d), want %s", i, got, rec.PID, want)
		}
	}
}
