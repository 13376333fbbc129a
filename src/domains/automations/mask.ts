const SECRET_KEY = /secret|token|password|passwd|api[-_]?key|authorization|cookie|credential/i;

/** A value with the values of secret-looking keys replaced, for showing run data to people. */
export function maskSecretKeys(value: unknown, depth = 0): unknown {
  if (depth > 50 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((v) => maskSecretKeys(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      SECRET_KEY.test(k) && v !== null && v !== '' ? '••••••' : maskSecretKeys(v, depth + 1),
    ]),
  );
}
