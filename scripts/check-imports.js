// Fails when value imports between folders of src/ form a cycle.
//
// A folder is a top-level folder of src/ (engine, http, …), a folder of src/domains (domains/pages,
// …) or a file directly under src/ (services, errors, …). Imports that only bring types
// (`import type`, `export type`, or every name marked `type`) are left out: they vanish when the
// code runs. Tests (*.test.ts) are left out too. With --graph it prints every folder's imports.
//
//   node scripts/check-imports.js [--graph]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const root = resolve(import.meta.dirname, '..');
const src = join(root, 'src');

function files(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return files(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The folder a file belongs to, as the cycles are counted. */
function folderOf(path) {
  const parts = relative(src, path).split(sep);
  if (parts.length === 1) return parts[0].replace(/\.ts$/, '');
  if (parts[0] === 'domains' && parts.length > 2) return `domains/${parts[1]}`;
  return parts[0];
}

/** The relative modules a file imports for their values. */
function valueImports(path) {
  const text = readFileSync(path, 'utf8');
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const found = [];
  const add = (specifier) => {
    if (specifier.startsWith('.')) found.push(resolve(dirname(path), specifier));
  };
  const visit = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const typeOnly =
        clause !== undefined &&
        (clause.isTypeOnly ||
          (clause.name === undefined &&
            clause.namedBindings !== undefined &&
            ts.isNamedImports(clause.namedBindings) &&
            clause.namedBindings.elements.length > 0 &&
            clause.namedBindings.elements.every((e) => e.isTypeOnly)));
      if (!typeOnly) add(node.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier &&
      ts.isStringLiteral(node.moduleSpecifier)
    ) {
      const typeOnly =
        node.isTypeOnly ||
        (node.exportClause !== undefined &&
          ts.isNamedExports(node.exportClause) &&
          node.exportClause.elements.length > 0 &&
          node.exportClause.elements.every((e) => e.isTypeOnly));
      if (!typeOnly) add(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteral(node.arguments[0])
    ) {
      add(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Folder → folder → the file imports that make that edge. */
const edges = new Map();
for (const file of files(src)) {
  const from = folderOf(file);
  for (const target of valueImports(file)) {
    if (!target.startsWith(src + sep)) continue;
    const to = folderOf(target);
    if (to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    const out = edges.get(from);
    if (!out.has(to)) out.set(to, []);
    out.get(to).push(`${relative(root, file)} → ${relative(root, target)}`);
  }
}

// Tarjan's strongly connected components: each component of more than one folder holds a cycle.
const folders = [...new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])])].sort();
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
let next = 0;
function connect(v) {
  index.set(v, next);
  low.set(v, next);
  next += 1;
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) components.push(component.sort());
  }
}
for (const folder of folders) if (!index.has(folder)) connect(folder);

if (process.argv.includes('--graph')) {
  for (const folder of folders) {
    const out = [...(edges.get(folder)?.keys() ?? [])].sort();
    console.log(`${folder} → ${out.join(', ') || '(nothing)'}`);
  }
}

if (components.length === 0) {
  console.log(`imports: no cycles between the ${folders.length} folders of src/`);
} else {
  console.error(
    `imports: ${components.length} cycle(s) between folders of src/ (value imports must run one way):`,
  );
  for (const component of components) {
    console.error(`\n  ${component.join(', ')}`);
    const inside = new Set(component);
    for (const from of component)
      for (const [to, why] of edges.get(from) ?? [])
        if (inside.has(to)) {
          console.error(`    ${from} → ${to}`);
          for (const line of why.slice(0, 3)) console.error(`      ${line}`);
          if (why.length > 3) console.error(`      … and ${why.length - 3} more`);
        }
  }
  process.exitCode = 1;
}
