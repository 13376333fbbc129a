#!/usr/bin/env node
// Runs every test file once; each database-backed suite runs itself on SQLite and on Postgres.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureChromium } from './browser.js';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === 'node_modules' ? [] : find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

const only = process.argv.slice(2);
const files = only.length ? only : [...find('src'), ...find('test')].sort();
if (files.some((f) => f.includes('.browser.'))) ensureChromium();
const result = spawnSync(
  process.execPath,
  [
    '--test',
    '--test-concurrency=2',
    '--test-timeout=120000',
    '--disable-warning=ExperimentalWarning',
    ...files,
  ],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
