package userevents

import (
	"encoding/binary"
	iunix "github.com/iotap/iotap/internal/unix"
	"unsafe"
)

// Typed is an event registered from a Go struct (see LayoutOf).
type Typed[T any] struct {
	*Event
	layout *StructLayout[T]
}

// RegisterStruct registers the event described by struct T (see LayoutOf).
func RegisterStruct[T any](p *Producer, name string, flags Flags) (*Typed[T], error) {
	l, err := LayoutOf[T](name)
	if err != nil {
		return nil, err
	}
	e, err := p.RegisterSchema(l.Schema, flags)
	if err != nil {
		return nil, err
	}
	return &Typed[T]{Event: e, layout: l}, nil
}

// Write encodes *v and writes it with one system call, without
// allocating: for structs without strings or slices (payload up to 128
// bytes) the fields are copied into one stack buffer after the write index
// and written with pwrite(2), else encoded and written with writev(2).
func (t *Typed[T]) Write(v *T) error {
	e := t.Event
	if e.p.done.Load() {
		return &Error{Op: "write", Event: e.schema.Name, Err: ErrClosed}
	}
	if runs := t.layout.runs; runs != nil {
		// Fixed fields: copy them onto the stack, no calls.
		var buf [4 + smallPayload]byte // write_index, then the payload
		p := unsafe.Pointer(v)
		for _, r := range runs {
			src := unsafe.Add(p, r.goOff)
			dst := buf[4+r.off:]
			switch r.size {
			case 4:
				binary.LittleEndian.PutUint32(dst, *(*uint32)(src))
			case 8:
				binary.LittleEndian.PutUint64(dst, *(*uint64)(src))
			case 2:
				binary.LittleEndian.PutUint16(dst, *(*uint16)(src))
			case 1:
				dst[0] = *(*byte)(src)
			default:
				copy(dst[:r.size], unsafe.Slice((*byte)(src), r.size))
			}
		}
		// One pwrite of index and payload (see the notes above pwriteFailed).
		binary.NativeEndian.PutUint32(buf[:4], e.idx)
		if e.p.noPwrite.Load() {
			return e.pwriteFailed(&buf, e.schema.FixedSize, 0)
		}
		if errno := iunix.Pwrite(e.p.raw, unsafe.Pointer(&buf), 4+e.schema.FixedSize); errno != 0 {
			return e.pwriteFailed(&buf, e.schema.FixedSize, errno)
		}
		return nil
	}
	if e.small {
		var buf [smallPayload]byte
		payload, err := t.layout.Append(buf[:0], v)
		if err != nil {
			return err
		}
		return e.writeBytes(payload)
	}
	b := e.pool.Get().(*writeBuf)
	payload, err := t.layout.Append(b.data[:0], v)
	if err == nil {
		err = e.writeBytes(payload)
	}
	e.pool.Put(b)
	return err
}
