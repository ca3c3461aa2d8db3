// Runs SQL statements with DuckDB and prints the rows of the last one as
// JSON (one array of objects). Used by iotap's tests as an independent
// Parquet reader: node query.mjs < file.sql, or node query.mjs 'SQL'.
// Statements are separated by a line holding only ';'.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

const sql = process.argv.length > 2 ? process.argv.slice(2).join(' ') : readFileSync(0, 'utf8');
const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const reader = await conn.runAndReadAll(sql);
const rows = reader.getRowObjectsJson();
process.stdout.write(JSON.stringify({ columns: reader.columnNames(), types: reader.columnTypes().map(t => t.toString()), rows }) + '\n');
