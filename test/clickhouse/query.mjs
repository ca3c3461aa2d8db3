// Runs one ClickHouse SQL statement with chDB (ClickHouse's engine,
// in-process) and prints its rows as JSON lines (JSONEachRow). Used by
// iotap's tests as an independent Parquet reader: node query.mjs < file.sql.
import { query } from 'chdb';
import { readFileSync } from 'node:fs';

const sql = process.argv.length > 2 ? process.argv.slice(2).join(' ') : readFileSync(0, 'utf8');
process.stdout.write(query(sql, 'JSONEachRow'));
