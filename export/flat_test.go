package export

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// randomRows makes n rows of T with random values: pointers nil one time
// in three, text from a few values (dictionary columns), integers over
// their whole range (signed and unsigned statistics), the identity the
// same in every row (as in one exported file).
func randomRows[T any](r *rand.Rand, n int, id Identity) []T {
	texts := []string{"", "R", "W", "0000:00:03.0/0", "CTRL", "{SLU, SPEED=1000}", "é\x00x"}
	rows := make([]T, n)
	var fill func(v reflect.Value)
	fill = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Struct:
			for i := 0; i < v.NumField(); i++ {
				if v.Type().Field(i).Type == reflect.TypeFor[Identity]() {
					v.Field(i).Set(reflect.ValueOf(id))
					continue
				}
				fill(v.Field(i))
			}
		case reflect.Pointer:
			if r.IntN(3) == 0 {
				return
			}
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem())
		case reflect.String:
			v.SetString(texts[r.IntN(len(texts))])
		case reflect.Int32:
			v.SetInt(int64(int32(r.Uint32())))
		case reflect.Int64:
			v.SetInt(int64(r.Uint64()))
		case reflect.Uint64:
			v.SetUint(r.Uint64() >> r.IntN(64))
		default:
			panic(v.Kind())
		}
	}
	for i := range rows {
		fill(reflect.ValueOf(&rows[i]).Elem())
	}
	return rows
}

// writeFlat writes rows through a flatFile, walking their fields with
// reflection (not the exporter's code): the identity as constants, every
// other field appended to its column in order.
func writeFlat[T any](t *testing.T, rows []T, id Identity, rowGroupRows int64, parallel bool, pageDir string, opts []parquet.WriterOption) []byte {
	t.Helper()
	var out bytes.Buffer
	f, err := newFlatFile[T](&out, rowGroupRows, parallel, opts...)
	if err != nil {
		t.Fatal(err)
	}
	f.pageDir = pageDir
	ids := reflect.ValueOf(id)
	for i := 0; i < ids.NumField(); i++ {
		f.setConst(i, ids.Field(i).String())
	}
	for _, row := range rows {
		col := ids.NumField()
		v := reflect.ValueOf(row)
		for i := 1; i < v.NumField(); i++ { // field 0 is Identity
			fv := v.Field(i)
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					f.null(col)
					col++
					continue
				}
				fv = fv.Elem()
			}
			switch fv.Kind() {
			case reflect.String:
				f.str(col, fv.String(), new(dictRef))
			case reflect.Int32:
				f.int32(col, int32(fv.Int()))
			case reflect.Int64:
				f.int64(col, fv.Int())
			case reflect.Uint64:
				f.int64(col, int64(fv.Uint()))
			}
			col++
		}
		if err := f.endRow(); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func readAll[T any](t *testing.T, b []byte) ([]T, *parquet.File) {
	t.Helper()
	pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	r := parquet.NewGenericReader[T](pf)
	rows := make([]T, pf.NumRows())
	n, err := r.Read(rows)
	if err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return rows[:n], pf
}

// TestFlatFileMatchesGenericWriter: the rows of a file written by
// flatFile read back (with parquet-go's reader) equal to those
// parquet.GenericWriter writes, with the same schema, metadata, row
// groups and column statistics (min, max, null count: what DuckDB skips
// row groups by); the parallel encoder writes the same bytes as the
// serial one.
func TestFlatFileMatchesGenericWriter(t *testing.T) {
	t.Run("mmio_accesses", func(t *testing.T) { testFlat[MMIOAccessRow](t, TableMMIOAccesses) })
	t.Run("mmio_maps", func(t *testing.T) { testFlat[MMIOMapRow](t, TableMMIOMaps) })
}

func testFlat[T any](t *testing.T, table string) {
	defer func(n int) { pageRows = n }(pageRows)
	pageRows = 256
	r := rand.New(rand.NewPCG(1, 2))
	id := Identity{Host: "lab1", BootID: "b-1", KernelRelease: "6.12", CaptureID: "0123456789abcdef", SourceFile: "cap/mmio.log", ClockDomain: "trace-local"}
	for _, tc := range []struct {
		rows    int
		rgRows  int64
		comment string
	}{
		{0, 1 << 20, "no rows"},
		{1, 1 << 20, "one row"},
		{5000, 1000, "row groups of 1000"},
		{256*2 + 17, 1 << 20, "three pages in one row group"},
		{256*4 + 3, 256 + 1, "row groups of a page and a row"},
	} {
		t.Run(tc.comment, func(t *testing.T) {
			rows := randomRows[T](r, tc.rows, id)
			x := &Exporter{opt: Options{RowGroupRows: tc.rgRows, IotapVersion: "test"}}
			opts := x.writerOptions(table)
			var ref bytes.Buffer
			w := parquet.NewGenericWriter[T](&ref, opts...)
			if _, err := w.Write(rows); err != nil {
				t.Fatal(err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			flat := writeFlat(t, rows, id, tc.rgRows, false, "", opts)
			if par := writeFlat(t, rows, id, tc.rgRows, true, "", opts); !bytes.Equal(par, flat) {
				t.Errorf("the parallel encoder wrote other bytes than the serial one")
			}
			dir := t.TempDir()
			for _, par := range []bool{false, true} {
				if b := writeFlat(t, rows, id, tc.rgRows, par, dir, opts); !bytes.Equal(b, flat) {
					t.Errorf("with the pages in page files (parallel %v), other bytes than in memory", par)
				}
			}
			if names := pageNames(t, dir); len(names) > 0 {
				t.Errorf("page files left: %v", names)
			}
			want, wf := readAll[T](t, ref.Bytes())
			got, gf := readAll[T](t, flat)
			if len(got) != len(rows) || len(want) != len(rows) {
				t.Fatalf("read %d rows of flatFile's, %d of GenericWriter's, want %d", len(got), len(want), len(rows))
			}
			for i := range rows {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Fatalf("row %d:\n got %+v\nwant %+v", i, got[i], want[i])
				}
			}
			gm, wm := gf.Metadata(), wf.Metadata()
			if !reflect.DeepEqual(gm.Schema, wm.Schema) || gm.CreatedBy != wm.CreatedBy || !reflect.DeepEqual(gm.KeyValueMetadata, wm.KeyValueMetadata) {
				t.Errorf("schema or metadata differ:\n got %+v\nwant %+v", gm.Schema, wm.Schema)
			}
			if len(gm.RowGroups) != len(wm.RowGroups) {
				t.Fatalf("%d row groups, want %d", len(gm.RowGroups), len(wm.RowGroups))
			}
			for i, rg := range gm.RowGroups {
				wrg := wm.RowGroups[i]
				if rg.NumRows != wrg.NumRows {
					t.Errorf("row group %d: %d rows, want %d", i, rg.NumRows, wrg.NumRows)
				}
				for j, c := range rg.Columns {
					gs, ws := c.MetaData.Statistics, wrg.Columns[j].MetaData.Statistics
					if ws.MinValue == nil && ws.Min != nil {
						ws.MinValue, ws.MaxValue = ws.Min, ws.Max
					}
					if !bytes.Equal(gs.MinValue, ws.MinValue) || !bytes.Equal(gs.MaxValue, ws.MaxValue) || gs.NullCount != ws.NullCount {
						t.Errorf("row group %d column %s: statistics %s, want %s", i, c.MetaData.PathInSchema, stats(gs), stats(ws))
					}
					if c.MetaData.NumValues != wrg.Columns[j].MetaData.NumValues {
						t.Errorf("row group %d column %s: %d values, want %d", i, c.MetaData.PathInSchema, c.MetaData.NumValues, wrg.Columns[j].MetaData.NumValues)
					}
				}
			}
		})
	}
}

func stats(s format.Statistics) string {
	return fmt.Sprintf("min %x max %x nulls %d", s.MinValue, s.MaxValue, s.NullCount)
}
