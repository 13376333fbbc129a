import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BUSY_ATTEMPTS, retryWait } from './retry.ts';

describe('retryWait', () => {
  const failed = { final: false, code: 'http_500' };

  it('tries a failed step again only under a policy, with the wait doubling', () => {
    assert.equal(retryWait(undefined, 1, failed), undefined);
    assert.equal(retryWait({ max_attempts: 3, backoff_s: 2 }, 1, failed), 2000);
    assert.equal(retryWait({ max_attempts: 3, backoff_s: 2 }, 2, failed), 4000);
    assert.equal(retryWait({ max_attempts: 3, backoff_s: 2 }, 3, failed), undefined);
    assert.equal(retryWait({ max_attempts: 3 }, 1, { ...failed, final: true }), undefined);
    assert.equal(retryWait({ max_attempts: 3 }, 1, { final: false, code: 'outcome_unknown' }), undefined);
  });

  it('tries a step whose document another writer held again, with or without a policy, after the wait it named', () => {
    const busy = { final: false, code: 'busy', retryAfterMs: 3000 };
    assert.equal(retryWait(undefined, 1, busy), 3000);
    assert.equal(retryWait(undefined, 1, { ...busy, retryAfterMs: undefined }), 1000);
    assert.equal(retryWait(undefined, BUSY_ATTEMPTS - 1, busy), 3000);
    assert.equal(retryWait(undefined, BUSY_ATTEMPTS, busy), undefined, 'not for ever');
    assert.equal(
      retryWait({ max_attempts: BUSY_ATTEMPTS + 2 }, BUSY_ATTEMPTS, busy),
      3000,
      'a longer policy wins',
    );
  });
});
