import type { z } from 'zod';

export type PathPart = string | number;

export function pathText(path: readonly PathPart[]): string {
  return path.length === 0 ? 'the plan' : path.join('.');
}

function list(values: readonly unknown[]): string {
  const shown = values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
  return shown.length <= 1 ? (shown[0] ?? '') : `${shown.slice(0, -1).join(', ')} or ${shown.at(-1)}`;
}

/** "an integer", "a string", "an hourly": the word with its article. */
export function withArticle(word: string): string {
  return `${/^([aeiou]|hour)/.test(word) ? 'an' : 'a'} ${word}`;
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Picks the union branch that got furthest (fewest issues) so its problems are the ones shown. */
function bestBranch(issue: z.core.$ZodIssueInvalidUnion): z.core.$ZodIssue[] | undefined {
  let best: z.core.$ZodIssue[] | undefined;
  for (const branch of issue.errors) {
    if (!best || branch.length < best.length) best = branch;
  }
  return best;
}

export interface ShapeProblem {
  path: PathPart[];
  message: string;
}

/** Zod issues as one sentence each, naming the field and what it must be. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  base: readonly PathPart[],
): ShapeProblem[] {
  const out: ShapeProblem[] = [];
  for (const issue of issues) {
    const path = [...base, ...(issue.path as PathPart[])];
    const at = pathText(path);
    switch (issue.code) {
      case 'invalid_type': {
        const expected = issue.expected === 'nonoptional' ? 'a value' : withArticle(issue.expected);
        const missing = /received undefined$/.test(issue.message);
        out.push({
          path,
          message: missing ? `${at} is required (${expected})` : `${at} must be ${expected}`,
        });
        break;
      }
      case 'unrecognized_keys':
        out.push({
          path,
          message: `${at} has unknown field${issue.keys.length > 1 ? 's' : ''} ${list(issue.keys)}; remove ${issue.keys.length > 1 ? 'them' : 'it'} (describe_capabilities lists the fields)`,
        });
        break;
      case 'invalid_value':
        out.push({ path, message: `${at} must be ${list(issue.values)}` });
        break;
      case 'invalid_union': {
        if ((issue as { note?: string }).note === 'No matching discriminator' || issue.errors.length === 0) {
          const options = (issue as unknown as { options?: unknown[] }).options;
          out.push({
            path,
            message: options ? `${at} must be ${list(options)}` : `${at}: ${issue.message}`,
          });
          break;
        }
        const branch = bestBranch(issue);
        if (branch) out.push(...describeIssues(branch, path));
        break;
      }
      case 'too_big':
        out.push({
          path,
          message:
            issue.origin === 'array'
              ? `${at} may have at most ${issue.maximum} items`
              : issue.origin === 'string'
                ? `${at} may be at most ${issue.maximum} characters`
                : `${at} must be at most ${issue.maximum}`,
        });
        break;
      case 'too_small':
        out.push({
          path,
          message:
            issue.origin === 'array'
              ? `${at} needs at least ${issue.minimum} item${issue.minimum === 1 ? '' : 's'}`
              : issue.origin === 'string'
                ? `${at} must not be empty`
                : `${at} must be at least ${issue.minimum}`,
        });
        break;
      case 'invalid_format':
        out.push({
          path,
          message:
            issue.format === 'regex' ? `${at} ${issue.message}` : `${at} must be a valid ${issue.format}`,
        });
        break;
      case 'not_multiple_of':
        out.push({ path, message: `${at} must be a whole number` });
        break;
      default:
        out.push({ path, message: `${at}: ${issue.message}` });
    }
  }
  return out;
}
