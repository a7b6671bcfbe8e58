/**
 * Whether this process may compile code from strings (`new Function`). Writers, span functions,
 * payload decoders and export row writers are generated per event type where it may; a process
 * hardened with `node --disallow-code-generation-from-strings` refuses it (an EvalError), and then
 * each of them uses its closure form, which writes and reads the same bytes (BENCHMARKS.md §17 has
 * what that costs). Found out once, by trying: the flag is process-wide and cannot change.
 */
export const codeGenerationAllowed: boolean = (() => {
  try {
    return new Function('return true')() === true;
  } catch {
    return false;
  }
})();
