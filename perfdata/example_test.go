package perfdata_test

import (
	"fmt"
	"io"
	"os"

	"github.com/iotap/iotap/perfdata"
)

// Read the records of a perf.data that perf record -z wrote (its records
// compressed with zstd) and count them by type.
func Example() {
	fh, err := os.Open("testdata/cpu-clock-z.data")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		fmt.Println(err)
		return
	}
	f, err := perfdata.Open(fh, st.Size())
	if err != nil {
		fmt.Println(err)
		return
	}
	rd := f.Records()
	defer rd.Close()
	byType := map[uint32]int{}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		byType[rec.Type]++
	}
	const sample, mmap2 = 9, 10 // PERF_RECORD_SAMPLE, PERF_RECORD_MMAP2
	fmt.Printf("%d attributes, %d compressed records: %d MMAP2, %d SAMPLE\n",
		len(f.Attrs), rd.Compressed(), byType[mmap2], byType[sample])
	// Output: 1 attributes, 1 compressed records: 4 MMAP2, 2 SAMPLE
}
