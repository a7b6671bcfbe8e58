/** One aligned result line: `  label ........ value`. */
export function row(label, value) {
  console.log(`  ${label.padEnd(50)} ${value}`);
}
