// The audit's per-series aggregation (mean duty cycle, idle share, sample count, and the peak
// memory where the file has it) in DuckDB on an nvidia-smi CSV, a dcgm-exporter text file or a
// long CSV in the Alibaba layout, with DuckDB's best query for each (split_part, no regular
// expressions). Usage: node aggregate.mjs FORMAT FILE [THREADS]; prints the series count and
// the query's seconds (bench/telemetry_vs_duckdb.sh times the whole process).
import { DuckDBInstance } from '@duckdb/node-api';

const [format, file, threads = '1'] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:', { threads });
const connection = await instance.connect();
const queries = {
  'nvidia-smi': `
    SELECT gpu, avg(util) AS mean_util, avg(CASE WHEN util < 5 THEN 1.0 ELSE 0.0 END) AS idle, max(mem) AS peak, count(*) AS n
    FROM (SELECT "index" AS gpu,
                 CAST(split_part(trim(util), ' ', 1) AS DOUBLE) AS util,
                 CAST(split_part(trim(mem), ' ', 1) AS DOUBLE) * 1048576 AS mem
          FROM read_csv('${file}', header = true, delim = ',', quote = '',
                        columns = {'ts': 'VARCHAR', 'index': 'INTEGER', 'name': 'VARCHAR', 'util': 'VARCHAR',
                                   'mem': 'VARCHAR', 'total': 'VARCHAR', 'power': 'VARCHAR'}))
    GROUP BY gpu`,
  dcgm: `
    SELECT labels, avg(v) AS mean_util, avg(CASE WHEN v < 5 THEN 1.0 ELSE 0.0 END) AS idle, count(*) AS n
    FROM (SELECT split_part(split_part(line, '{', 2), '}', 1) AS labels,
                 CAST(split_part(split_part(line, '} ', 2), ' ', 1) AS DOUBLE) AS v
          FROM read_csv('${file}', header = false, delim = '\\x01', quote = '', columns = {'line': 'VARCHAR'})
          WHERE starts_with(line, 'DCGM_FI_DEV_GPU_UTIL{'))
    GROUP BY labels`,
  'long-csv': `
    SELECT container_ip, avg(value) AS mean_util, avg(CASE WHEN value < 5 THEN 1.0 ELSE 0.0 END) AS idle,
           min(timestamp_anon) AS first, max(timestamp_anon) AS last, count(*) AS n
    FROM read_csv('${file}', header = true, delim = ',', quote = '',
                  columns = {'value': 'DOUBLE', 'timestamp_anon': 'DOUBLE', 'container_ip': 'VARCHAR'})
    GROUP BY container_ip`,
};
const start = performance.now();
const result = await connection.runAndReadAll(queries[format]);
const seconds = (performance.now() - start) / 1000;
console.log(`${result.getRows().length} ${seconds.toFixed(3)}`);
