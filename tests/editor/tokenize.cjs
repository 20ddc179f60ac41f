// Tokenizes a file with a TextMate grammar the way VS Code does (vscode-textmate + oniguruma, taken from
// the code-server install), printing one JSON line per token: {"line", "text", "scopes"}.
// usage: node tokenize.cjs VSCODE_NODE_MODULES GRAMMAR.json SCOPE FILE
const [base, grammarPath, scope, file] = process.argv.slice(2);
const fs = require("node:fs");
const tm = require(`${base}/vscode-textmate`);
const onig = require(`${base}/vscode-oniguruma`);

const onigLib = onig.loadWASM(fs.readFileSync(`${base}/vscode-oniguruma/release/onig.wasm`).buffer).then(() => ({
  createOnigScanner: (patterns) => new onig.OnigScanner(patterns),
  createOnigString: (s) => new onig.OnigString(s),
}));
const registry = new tm.Registry({
  onigLib,
  loadGrammar: async (name) => (name === scope ? tm.parseRawGrammar(fs.readFileSync(grammarPath, "utf8"), grammarPath) : null),
});
registry.loadGrammar(scope).then((grammar) => {
  let state = tm.INITIAL;
  fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
    const r = grammar.tokenizeLine(line, state);
    state = r.ruleStack;
    for (const t of r.tokens) {
      const text = line.slice(t.startIndex, t.endIndex);
      if (text.trim()) console.log(JSON.stringify({ line: i + 1, text: text.trim(), scopes: t.scopes.slice(1) }));
    }
  });
});
