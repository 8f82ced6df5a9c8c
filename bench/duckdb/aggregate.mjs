// The audit's per-series aggregation (mean duty cycle, idle share, peak memory, sample count)
// in DuckDB, single-threaded, on an nvidia-smi CSV or a dcgm-exporter text file. Prints the
// number of series and the seconds taken.
import { DuckDBInstance } from '@duckdb/node-api';

const [format, file] = process.argv.slice(2);
const instance = await DuckDBInstance.create(':memory:', { threads: '1' });
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
    FROM (SELECT regexp_extract(line, '\\{([^}]*)\\}', 1) AS labels,
                 CAST(regexp_extract(line, '\\} ([0-9.eE+-]+)', 1) AS DOUBLE) AS v
          FROM read_csv('${file}', header = false, delim = '\\x01', quote = '', columns = {'line': 'VARCHAR'})
          WHERE line LIKE 'DCGM_FI_DEV_GPU_UTIL{%')
    GROUP BY labels`,
};
const start = performance.now();
const result = await connection.runAndReadAll(queries[format]);
const seconds = (performance.now() - start) / 1000;
console.log(`${result.getRows().length} ${seconds.toFixed(3)}`);
