import { loadConfig } from '../config.ts';
import { parseTtl } from '../domains/auth/tokens.ts';
import { SCOPES } from '../domains/workspace/actor.ts';
import { actorFor, parse, UsageError, withServices } from './args.ts';

const day = (ms: number) => new Date(ms).toISOString().slice(0, 16).replace('T', ' ');

/** `tandem token create|list|revoke`. */
export async function tokenCommand(args: string[]) {
  const [sub, ...rest] = args;
  if (sub === 'create') return createToken(rest);
  if (sub === 'list') return listTokens(rest);
  if (sub === 'revoke') return revokeToken(rest);
  throw new UsageError(`unknown token command "${sub ?? ''}"; use: tandem token create, list or revoke`);
}

async function createToken(args: string[]) {
  const { values } = parse(args, {
    user: { type: 'string' },
    workspace: { type: 'string' },
    scopes: { type: 'string' },
    ttl: { type: 'string' },
  });
  if (!values.user) throw new UsageError('--user EMAIL is required');
  if (!values.scopes) throw new UsageError(`--scopes LIST is required, e.g. --scopes ${SCOPES.join(',')}`);
  const ttl = parseTtl(values.ttl ?? '30d');
  const token = await withServices(loadConfig(), async (services) => {
    const actor = await actorFor(services, values.user, values.workspace, values.scopes!);
    return services.tokens.create(actor.personId, actor.workspaceId, [...actor.scopes], ttl);
  });
  console.log(token.token);
}

/** One line per token that still works: id, scopes, made, expires. */
async function listTokens(args: string[]) {
  const { values } = parse(args, { user: { type: 'string' }, workspace: { type: 'string' } });
  if (!values.user) throw new UsageError('--user EMAIL is required');
  const tokens = await withServices(loadConfig(), async (services) => {
    const actor = await actorFor(services, values.user, values.workspace, SCOPES.join(','));
    return services.tokens.list(actor.personId);
  });
  if (tokens.length === 0) {
    console.log(`${values.user} has no personal access tokens`);
    return;
  }
  for (const t of tokens) {
    const expires = t.expires_at === null ? 'never expires' : `expires ${day(t.expires_at)}`;
    console.log(`${t.token_id}  ${t.scopes.join(',')}  made ${day(t.created_at)}  ${expires}`);
  }
}

async function revokeToken(args: string[]) {
  const { positionals } = parse(args, {}, 1);
  const id = positionals[0];
  if (!id)
    throw new UsageError(
      'token revoke needs a token id: tandem token revoke TOKEN_ID (see tandem token list)',
    );
  await withServices(loadConfig(), (services) => services.tokens.revoke(id));
  console.log(`revoked ${id}`);
}

/** `tandem user password --user EMAIL [--workspace NAME]`: the new password is read from standard input. */
export async function userCommand(args: string[]) {
  const [sub, ...rest] = args;
  if (sub !== 'password')
    throw new UsageError(`unknown user command "${sub ?? ''}"; use: tandem user password`);
  const { values } = parse(rest, { user: { type: 'string' }, workspace: { type: 'string' } });
  if (!values.user) throw new UsageError('--user EMAIL is required');
  const password = await readPassword();
  if (!password)
    throw new UsageError('give the new password on standard input, e.g. a line typed or piped in');
  await withServices(loadConfig(), async (services) => {
    // Checks the person exists (in that workspace, when named) before the account changes.
    await actorFor(services, values.user, values.workspace, SCOPES.join(','));
    await services.accounts.setPassword(values.user!, password);
  });
  console.log(`set the password of ${values.user}`);
}

/** The first line of standard input (without its line end); at a terminal it is typed unseen. */
async function readPassword(): Promise<string> {
  if (process.stdin.isTTY) return typeUnseen('New password: ');
  let text = '';
  for await (const chunk of process.stdin) {
    text += String(chunk);
    if (text.includes('\n') || text.length > 4096) break;
  }
  return text.split(/\r?\n/, 1)[0] ?? '';
}

/** Reads one line from the terminal without echoing it. */
function typeUnseen(prompt: string): Promise<string> {
  const input = process.stdin;
  process.stderr.write(prompt);
  input.setRawMode(true);
  input.setEncoding('utf8');
  let typed = '';
  return new Promise((resolve) => {
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\u0003') process.exit(130);
        if (ch === '\r' || ch === '\n') {
          input.setRawMode(false);
          input.pause();
          input.off('data', onData);
          process.stderr.write('\n');
          resolve(typed);
          return;
        }
        typed = ch === '\u007f' || ch === '\b' ? typed.slice(0, -1) : typed + ch;
      }
    };
    input.on('data', onData);
    input.resume();
  });
}
