package vmlab

import (
	"reflect"
	"testing"
)

func TestParseLDD(t *testing.T) {
	out := []byte("\tlinux-vdso.so.1 (0x00007ffd)\n" +
		"\tlibz.so.1 => /lib/x86_64-linux-gnu/libz.so.1 (0x00007f01)\n" +
		"\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f02)\n" +
		"\t/lib64/ld-linux-x86-64.so.2 (0x00007f03)\n")
	got, err := parseLDD(out)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"/lib/x86_64-linux-gnu/libz.so.1": "/lib/x86_64-linux-gnu/libz.so.1",
		"/lib/x86_64-linux-gnu/libc.so.6": "/lib/x86_64-linux-gnu/libc.so.6",
		"/lib64/ld-linux-x86-64.so.2":     "/lib64/ld-linux-x86-64.so.2",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	if _, err := parseLDD([]byte("\tlibfoo.so.1 => not found\n")); err == nil {
		t.Error("a missing library is not an error")
	}
}
