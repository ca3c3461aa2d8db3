module github.com/iotap/iotap

go 1.26.0

require (
	github.com/parquet-go/parquet-go v0.32.0
	github.com/spf13/cobra v1.10.2
	golang.org/x/sys v0.49.0
)

require github.com/ianlancetaylor/demangle v0.0.0-20260724033716-83e58baca724

require (
	github.com/andybalholm/brotli v1.1.1 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/parquet-go/bitpack v1.0.0 // indirect
	github.com/parquet-go/jsonlite v1.0.0 // indirect
	github.com/pierrec/lz4/v4 v4.1.21 // indirect
	github.com/twpayne/go-geom v1.6.1 // indirect
)

require (
	github.com/gopacket/gopacket v1.7.7
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/klauspost/compress v1.20.3
	github.com/spf13/pflag v1.0.9
	github.com/ulikunitz/xz v0.5.17
	golang.org/x/net v0.55.0
	google.golang.org/protobuf v1.36.12
	gopkg.in/yaml.v3 v3.0.1
)
