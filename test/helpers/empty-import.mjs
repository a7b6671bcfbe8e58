// Imports nothing and does nothing: `--import` of this file is the control for what `--import` itself
// changes in Node (scripts/transparency.mjs), apart from anything tracepipe/register does.
