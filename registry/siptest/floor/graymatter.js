// The peer of `sip validate`: gray-matter + js-yaml, parse only. Reads
// every .md file of a folder and parses its frontmatter, as a JavaScript
// SIP tool does before it checks anything. `make bench-validate` installs
// the two packages from npm and runs it next to sip and the floor:
//
//	node graymatter.js DIR
const fs = require('fs');
const path = require('path');
const matter = require('gray-matter');

const dir = process.argv[2];
let files = 0;
for (const name of fs.readdirSync(dir)) {
  if (!name.endsWith('.md')) continue;
  try {
    matter(fs.readFileSync(path.join(dir, name), 'utf8'), { cache: false });
  } catch (e) {
    // a file whose YAML does not parse still counts: it was read
  }
  files++;
}
console.log(files + ' files');
