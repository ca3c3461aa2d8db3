package userevents

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

// Write encodes *v and writes it with one writev(2), without allocating.
func (t *Typed[T]) Write(v *T) error {
	e := t.Event
	if e.p.done.Load() {
		return &Error{Op: "write", Event: e.schema.Name, Err: ErrClosed}
	}
	if e.small {
		var buf [smallPayload]byte
		payload, err := t.layout.Append(buf[:0], v)
		if err != nil {
			return err
		}
		return e.writev(payload)
	}
	b := e.pool.Get().(*writeBuf)
	payload, err := t.layout.Append(b.data[:0], v)
	if err == nil {
		err = e.writev(payload)
	}
	e.pool.Put(b)
	return err
}
