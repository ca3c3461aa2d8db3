// Package export writes iotap's sources as Parquet tables, one per record
// kind (usb_events, usb_transfers, mmio_accesses, mmio_maps, mmio_fields,
// user_events, captures), for SQL engines: DuckDB on one machine,
// ClickHouse, Spark or Trino over a fleet's captures.
//
// An Exporter streams each input once through the source's reader
// (usbmon + usb pairing and identities, mmiotrace + the register
// databases of regdb, user_events NDJSON) into row structs whose parquet
// tags are the schema (schema.go; docs/parquet.md documents every column
// and SchemaVersion). Every row carries the capture identity (Identity).
// Files are written with parquet-go: zstd, dictionary-encoded text
// columns, bounded row groups, through a temporary file renamed when
// complete; Hive-style host=/date= partitions on request.
//
// Loss is not an error: it is counted in the captures rows (LostEvents,
// SkippedLines, Truncated, Complete, Loss) that ExportPath returns and
// Close writes.
package export
