// Prints OpenAI's tiktoken's token ids (the npm package tiktoken, its Rust
// core in WASM) of each text of a file, for TestSameAsOpenAITiktoken.
// Usage: node tiktoken.js DIR TEXTS, where DIR holds node_modules/tiktoken
// and TEXTS has one JSON string a line. Prints, for each text, a line of
// o200k_base's ids and a line of cl100k_base's, space-separated, with
// encode_ordinary (special tokens' spellings are text).
"use strict";
const fs = require("fs");
const path = require("path");
const [dir, file] = process.argv.slice(2);
const { get_encoding } = require(require.resolve("tiktoken", { paths: [path.resolve(dir)] }));
const encs = ["o200k_base", "cl100k_base"].map((n) => get_encoding(n));
const out = [];
for (const line of fs.readFileSync(file, "utf8").split("\n")) {
  if (line === "") continue;
  const text = JSON.parse(line);
  for (const e of encs) out.push(Array.from(e.encode_ordinary(text)).join(" "));
}
for (const e of encs) e.free();
process.stdout.write(out.join("\n") + "\n");
