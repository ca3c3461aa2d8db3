package filter_test

import (
	"fmt"

	"github.com/iotap/iotap/filter"
)

type packet struct {
	Port uint16
	Host string
}

func Example() {
	fields := filter.NewTable(
		filter.Field[packet]{Name: "tcp.port", Num: func(p *packet) (filter.Int, bool) { return filter.Uint(uint64(p.Port)), true }},
		filter.Field[packet]{Name: "http.host", Str: func(p *packet) (string, bool) { return p.Host, p.Host != "" }},
	)
	match, err := filter.ParseCompile(`tcp.port == 443 || http.host contains "example"`, fields)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []packet{{443, ""}, {80, "www.example.org"}, {22, ""}} {
		fmt.Println(p.Port, match(&p))
	}
	_, err = filter.ParseCompile(`tcp.port = 443`, fields)
	fmt.Println(err)
	// Output:
	// 443 true
	// 80 true
	// 22 false
	// filter "tcp.port = 443": column 10: "=" is not an operator: use "==" to compare
}

// Complete offers the fields a shell completes at the end of a -Y
// expression.
func ExampleComplete() {
	fields := filter.NewTable(
		filter.Field[packet]{Name: "tcp.port", Num: func(p *packet) (filter.Int, bool) { return filter.Uint(uint64(p.Port)), true }},
		filter.Field[packet]{Name: "tcp.srcport", Num: func(p *packet) (filter.Int, bool) { return filter.Uint(uint64(p.Port)), true }},
		filter.Field[packet]{Name: "http.host", Str: func(p *packet) (string, bool) { return p.Host, p.Host != "" }},
	)
	for _, c := range filter.Complete(fields.Fields(), "http.host == \"a\" || tcp.") {
		fmt.Printf("%q\n", c)
	}
	// Output:
	// "http.host == \"a\" || tcp.port\tnumber"
	// "http.host == \"a\" || tcp.srcport\tnumber"
}
