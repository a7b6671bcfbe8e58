const { openDuckDB } = await import('@tracepipe/analyze');
const { readFileSync } = await import('node:fs');
const { join } = await import('node:path');
const [ml, comp, rg, buf] = process.argv.slice(2);
const staged = JSON.parse(readFileSync('/tmp/cv/q8.pending.json', 'utf8'));
const { dir, tables } = staged.pending;
const ident = (n) => `"${n.replaceAll('"', '""')}"`; const literal = (s) => `'${s.replaceAll("'", "''")}'`;
const e = await openDuckDB({ spillDir: '/tmp/cv/q11spill', memoryLimit: ml, threads: 1 });
for (const { file, names, types } of tables) {
  const select = names.map((n, i) => (types[i] === 'BLOB' ? `from_hex(${ident(n)}) AS ${ident(n)}` : ident(n))).join(', ');
  const columns = names.map((n, i) => `${literal(n)}: '${types[i] === 'BLOB' ? 'VARCHAR' : types[i]}'`).join(', ');
  await e.connection.run(`COPY (SELECT ${select} FROM read_csv(${literal(join(dir, '.csv-staging', file))}, header = true, columns = {${columns}}, quote = '"', escape = '"', allow_quoted_nulls = false, auto_detect = false, buffer_size = ${buf})) TO '/tmp/cv/q11.parquet' (FORMAT parquet, COMPRESSION ${comp}, ROW_GROUP_SIZE ${rg})`);
}
await e.close();
console.log(process.argv.slice(2).join(' '), 'maxrss', (process.resourceUsage().maxRSS/1024).toFixed(0));
