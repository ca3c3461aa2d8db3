package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/iotap/iotap/internal/outfile"
	"github.com/iotap/iotap/mmiotrace"
	"github.com/iotap/iotap/regdb"
	"github.com/spf13/cobra"
)

func newMMIONamesCmd(e *env) *cobra.Command {
	var o namesOptions
	c := &cobra.Command{
		Use:   "names [--db FILE|NAME] [--variant V] [--bar PCIADDR/N=DOMAIN] [--json] FILE",
		Short: "Name the registers of every MMIO access and decode the values into bitfields",
		Long: `Map every access of an mmiotrace log to a PCI device BAR (from the PCIDEV
and MAP records of the log), name the register and decode the value into
bitfields and enums, using a register database: envytools rnndb XML or the
native YAML form (--db FILE), or one shipped with iotap (--db e1000; without
--db the shipped database matching the device's PCI id is used).

Each line of the log is printed followed by " ; NAME = VALUE {FIELDS}" for
accesses, or one NDJSON object per access with --json. Accesses that cannot
be named (outside any BAR, in a BAR without a database, or at an offset the
database does not describe) are counted and reported on stderr at the end.

--bar binds a device BAR to a domain of the database explicitly, for
databases without PCI ids (rnndb XML): --bar 0000:00:03.0/0=E1000.
--variant selects database variants (rnndb varset/variants): V or SET=V.`,
		Example: `  iotap mmio names testdata/mmiotrace/e1000-probe.log
  iotap mmio names --db nv_mmio.xml --variant NV50 --bar 0000:01:00.0/0=NV_MMIO trace.log.xz
  iotap mmio names --json trace.log | jq 'select(.register == "IMC")'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMMIONames(e, &o, args[0])
		},
	}
	f := c.Flags()
	f.StringVarP(&o.out, "output", "o", "-", "output file (- for stdout; .gz/.xz/.zst compress)")
	f.StringArrayVar(&o.dbs, "db", nil, "register database: a file (rnndb XML or YAML) or a shipped name ("+strings.Join(regdb.Builtins(), ", ")+"); repeatable")
	f.StringVar(&o.variant, "variant", "", "database variant to apply: V or SET=V (comma-separated)")
	f.StringArrayVar(&o.bars, "bar", nil, "bind a BAR to a database domain: PCIADDR/N=DOMAIN or VENDOR:DEVICE/N=DOMAIN (repeatable)")
	f.BoolVar(&o.asJSON, "json", false, "write NDJSON, one object per access")
	f.BoolVar(&o.keepGoing, "keep-going", true, mmioKeepGoingHelp)
	f.BoolVar(&o.allowLoss, "allow-loss", false, "exit 0 even when the log lost events or lines were skipped")
	return c
}

type namesOptions struct {
	out       string
	dbs       []string
	variant   string
	bars      []string
	asJSON    bool
	keepGoing bool
	allowLoss bool
}

func loadNamesDB(spec string) (*regdb.DB, error) { return loadDB("mmio names", spec) }

func newNamer(o *namesOptions) (*regdb.Namer, error) {
	n := regdb.NewNamer(regdb.Binder{Variant: o.variant})
	for _, s := range o.dbs {
		db, err := loadNamesDB(s)
		if err != nil {
			return nil, err
		}
		n.DBs = append(n.DBs, db)
	}
	if o.variant != "" && len(n.DBs) == 0 {
		ok := false
		for _, b := range regdb.Builtins() {
			if db, err := regdb.Builtin(b); err == nil {
				if _, err := db.WithVariant(o.variant); err == nil {
					ok = true
				}
			}
		}
		if !ok {
			return nil, usageErrorf("mmio names: --variant %q: no shipped database defines it (give the database with --db)", o.variant)
		}
	}
	if o.variant != "" && len(n.DBs) > 0 {
		applied := false
		for i, db := range n.DBs {
			v, err := db.WithVariant(o.variant)
			if err == nil {
				n.DBs[i], applied = v, true
			} else if !errors.Is(err, regdb.ErrNotFound) {
				return nil, err
			}
		}
		if !applied {
			return nil, usageErrorf("mmio names: --variant %q: no database defines it", o.variant)
		}
	}
	for _, s := range o.bars {
		b, err := regdb.ParseBARRule(s)
		if err != nil {
			return nil, usageErrorf("mmio names: --bar %q: %v", s, err)
		}
		if _, _, ok := n.FindDomain(b.Domain); !ok {
			return nil, usageErrorf("mmio names: --bar %q: no database has a domain %q", s, b.Domain)
		}
		n.Rules = append(n.Rules, b)
	}
	return n, nil
}

func runMMIONames(e *env, o *namesOptions, path string) error {
	n, err := newNamer(o)
	if err != nil {
		return err
	}
	in, err := mmioOpenMetered(e, "mmio names", path, true)
	if err != nil {
		return err
	}
	defer in.Close()
	rd := mmiotrace.NewReader(in)
	defer rd.Close()
	rd.SetKeepGoing(o.keepGoing)
	w, closeOut, err := mmioCreateOutput(e, o.out, outfile.Atomic, path)
	if err != nil {
		return err
	}
	defer func() {
		if closeOut != nil {
			closeOut()
		}
	}()
	bars := mmiotrace.NewBARMap()
	bw := bufio.NewWriterSize(w, 256<<10)
	if o.asJSON {
		bw.Write(mmiotrace.AppendNDJSONInput(nil, path, mmioInputFormat(in)))
	}
	var rec mmiotrace.Record
	var buf []byte
	for i := 0; ; i++ {
		if i&0xffff == 0 && e.ctx.Err() != nil {
			bw.Flush()
			return e.ctx.Err()
		}
		err := rd.ReadInto(&rec)
		if err == io.EOF {
			break
		}
		if err != nil {
			bw.Flush()
			return fmt.Errorf("mmio names: %s: %w", path, err)
		}
		bars.Observe(&rec)
		isAccess := rec.Kind == mmiotrace.KindRead || rec.Kind == mmiotrace.KindWrite || rec.Kind == mmiotrace.KindUnknown
		if !isAccess {
			if !o.asJSON {
				buf = appendLine(buf[:0], &rec)
				bw.Write(buf)
			}
			continue
		}
		a := n.Resolve(bars, &rec)
		if o.asJSON {
			buf = regdb.AppendNameNDJSON(buf[:0], rd.Line(), &rec, a)
			if _, err := bw.Write(buf); err != nil {
				return err
			}
			continue
		}
		buf = appendLine(buf[:0], &rec)
		buf = buf[:len(buf)-1]
		buf = n.AppendNamed(buf, &rec, a)
		buf = append(buf, '\n')
		if _, err := bw.Write(buf); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	cl := closeOut
	closeOut = nil
	if err := cl(); err != nil {
		return err
	}
	n.WriteSummary(e.stderr)
	return mmioLoss(e, rd.Loss(), o.allowLoss)
}

// appendLine appends the record's original line and a newline.
func appendLine(dst []byte, rec *mmiotrace.Record) []byte {
	if rec.Line != nil {
		dst = append(dst, rec.Line...)
		return append(dst, '\n')
	}
	return mmiotrace.AppendRecord(dst, rec)
}
