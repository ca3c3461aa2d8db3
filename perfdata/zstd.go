package perfdata

import (
	"errors"
	"io"

	"github.com/klauspost/compress/zstd"
)

// zstdStream inflates the payloads of perf record -z's compressed
// records. perf compresses its whole session as one zstd stream, flushed
// at the end of each record (tools/perf/util/zstd.c: ZSTD_compressStream
// and ZSTD_flushStream), so a record is not a frame of its own and holds
// only part of one: the decoder must carry its state from record to
// record. klauspost/compress's decoder reads from an io.Reader; it runs
// in a goroutine whose reader hands it one record's payload at a time.
// When it asks for more input, everything the payload so far decodes to
// has been written (a flush ends a zstd block), so feed then returns.
type zstdStream struct {
	in   chan []byte   // payloads to the decoder
	want chan struct{} // the decoder has used its input up and wants more
	done chan error    // the decoder ended (EOF of in, or an error)
	out  limitedBuffer
	err  error
}

func newZstdStream(limit int) *zstdStream {
	z := &zstdStream{in: make(chan []byte), want: make(chan struct{}), done: make(chan error, 1), out: limitedBuffer{limit: limit}}
	go func() {
		dec, err := zstd.NewReader(&chunkReader{z: z}, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(limit)))
		if err == nil {
			_, err = io.Copy(&z.out, dec)
			dec.Close()
		}
		z.done <- err
	}()
	z.wait()
	return z
}

// chunkReader gives the decoder the payloads fed to the stream.
type chunkReader struct {
	z   *zstdStream
	cur []byte
}

func (c *chunkReader) Read(p []byte) (int, error) {
	for len(c.cur) == 0 {
		c.z.want <- struct{}{}
		b, ok := <-c.z.in
		if !ok {
			return 0, io.EOF
		}
		c.cur = b
	}
	n := copy(p, c.cur)
	c.cur = c.cur[n:]
	return n, nil
}

// wait returns once the decoder wants input or has ended.
func (z *zstdStream) wait() {
	if z.err != nil {
		return
	}
	select {
	case <-z.want:
	case err := <-z.done:
		if err == nil {
			err = errors.New("zstd stream ended")
		}
		z.err = err
	}
}

// feed decodes payload, appending what it inflates to dst.
func (z *zstdStream) feed(dst, payload []byte) ([]byte, error) {
	if z.err != nil {
		return dst, z.err
	}
	z.out.b = dst
	z.in <- payload
	z.wait()
	dst, z.out.b = z.out.b, nil
	return dst, z.err
}

// close ends the decoder goroutine.
func (z *zstdStream) close() {
	if z.err == nil {
		close(z.in)
		<-z.done
		z.err = errors.New("zstd stream closed")
	}
}

// limitedBuffer appends to b and refuses to grow past limit bytes.
type limitedBuffer struct {
	b     []byte
	limit int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if len(l.b)+len(p) > l.limit {
		return 0, errors.New("inflates to more than the limit")
	}
	l.b = append(l.b, p...)
	return len(p), nil
}
