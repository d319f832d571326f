// Reads one JSON string per line on stdin and writes, per line, the JSON
// string new URL(input).origin, or null when the WHATWG URL parser refuses
// the input. TestOriginAgainstNode (origin_node_test.go) drives it.
'use strict';
const fs = require('fs');
const lines = fs.readFileSync(0, 'utf8').split('\n');
const out = [];
for (const line of lines) {
  if (line === '') continue;
  const input = JSON.parse(line);
  let origin = null;
  try {
    origin = new URL(input).origin;
  } catch (e) {
    origin = null;
  }
  out.push(JSON.stringify(origin));
}
out.push('');
fs.writeFileSync(1, out.join('\n'));
