package regdb

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/iotap/iotap/mmiotrace"
)

// SetVariant selects the database variant sel (V or SET=V, comma
// separated; see DB.WithVariant) before anything is named: applied to
// each of DBs that defines it, or without DBs to the shipped databases
// that do. When no database defines it the error wraps ErrNotFound.
func (b *Binder) SetVariant(sel string) error {
	b.Variant = sel
	if sel == "" {
		return nil
	}
	if len(b.DBs) == 0 {
		for _, name := range Builtins() {
			if db, err := Builtin(name); err == nil {
				if _, err := db.WithVariant(sel); err == nil {
					return nil
				}
			}
		}
		return &notFoundError{fmt.Sprintf("variant %q: no shipped database defines it", sel)}
	}
	applied := false
	for i, db := range b.DBs {
		v, err := db.WithVariant(sel)
		if err == nil {
			b.DBs[i], applied = v, true
		} else if !errors.Is(err, ErrNotFound) {
			return err
		}
	}
	if !applied {
		return &notFoundError{fmt.Sprintf("variant %q: no database defines it", sel)}
	}
	return nil
}

// AddRule adds an explicit binding of a BAR (ParseBARRule). When no
// database has the rule's domain the error wraps ErrNotFound.
func (b *Binder) AddRule(r BARRule) error {
	if _, _, ok := b.FindDomain(r.Domain); !ok {
		return &notFoundError{fmt.Sprintf("no database has a domain %q", r.Domain)}
	}
	b.Rules = append(b.Rules, r)
	return nil
}

// NameLog reads the log rd to its end and writes it to w as 'iotap mmio
// names' does: every line, each access followed by its naming
// (AppendNamed), or with asJSON one mmio_name record per access
// (AppendNameNDJSON) and nothing else. The BARs are those of the log's
// PCIDEV and MAP records. The counts add up in n (WriteSummary reports
// them) and rd's loss accounting covers what was read.
//
// What was named before an error, or before ctx was cancelled, is
// written; then the error (or ctx.Err()) is returned.
func (n *Namer) NameLog(ctx context.Context, rd *mmiotrace.Reader, w io.Writer, asJSON bool) error {
	bars := mmiotrace.NewBARMap()
	bw := bufio.NewWriterSize(w, 256<<10)
	var (
		rec mmiotrace.Record
		buf []byte
		err error
	)
	for i := 0; ; i++ {
		if i&0xffff == 0 && ctx.Err() != nil {
			err = ctx.Err()
			break
		}
		if err = rd.ReadInto(&rec); err != nil {
			if err == io.EOF {
				err = nil
			}
			break
		}
		bars.Observe(&rec)
		switch {
		case rec.Kind != mmiotrace.KindRead && rec.Kind != mmiotrace.KindWrite && rec.Kind != mmiotrace.KindUnknown:
			if asJSON {
				continue
			}
			buf = appendLine(buf[:0], &rec)
		case asJSON:
			buf = AppendNameNDJSON(buf[:0], rd.Line(), &rec, n.Resolve(bars, &rec))
		default:
			a := n.Resolve(bars, &rec)
			buf = appendLine(buf[:0], &rec)
			buf = n.AppendNamed(buf[:len(buf)-1], &rec, a)
			buf = append(buf, '\n')
		}
		if _, err = bw.Write(buf); err != nil {
			return err
		}
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	return err
}

// appendLine appends the record's line as read (its own line when the
// reader kept it) and a newline.
func appendLine(dst []byte, rec *mmiotrace.Record) []byte {
	if rec.Line != nil {
		dst = append(dst, rec.Line...)
		return append(dst, '\n')
	}
	return mmiotrace.AppendRecord(dst, rec)
}
