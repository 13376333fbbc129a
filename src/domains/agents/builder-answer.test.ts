import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseBuilderAnswer } from './builder-answer.ts';

const PLAN = { planVersion: 1, name: 'Digest', nodes: [], edges: [] };

describe('reading the Builder’s answer', () => {
  it('takes {ask, write_approval, plan} as it is, in a code fence or with words around it', () => {
    const json = JSON.stringify({ ask: 'Post a digest.', write_approval: 'automatic', plan: PLAN });
    for (const text of [json, `\`\`\`json\n${json}\n\`\`\``, `Here it is:\n\n${json}\n\nEnjoy.`]) {
      assert.deepEqual(parseBuilderAnswer(text), {
        answer: { plan: PLAN, ask: 'Post a digest.', write_approval: 'automatic' },
      });
    }
  });

  it('takes a bare FlowPlan as the plan', () => {
    assert.deepEqual(parseBuilderAnswer(JSON.stringify(PLAN)), { answer: { plan: PLAN } });
  });

  it('says what is wrong with anything else', () => {
    const problem = (text: string) => {
      const parsed = parseBuilderAnswer(text);
      assert.ok('problem' in parsed, text);
      return parsed.problem;
    };
    assert.match(problem('You want a weekly digest.'), /not a JSON object \(there is no JSON object in it\)/);
    assert.match(problem('{"plan": '), /not a JSON object/);
    assert.match(problem('[1, 2]'), /not a JSON object/);
    assert.match(problem('{"ask": "Digest."}'), /no "plan" field/);
    assert.match(problem('{"ask": "x"} and {"plan": 1}'), /not a JSON object/);
  });
});
