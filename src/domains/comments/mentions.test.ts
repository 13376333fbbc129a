import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ASSISTANT,
  findMentions,
  resolveMentions,
  RETIRED_TO_ASSISTANT,
  type MentionTargets,
} from './mentions.ts';

describe('findMentions', () => {
  it('finds every handle in order', () => {
    assert.deepEqual(findMentions('@ada please ask @bob, then @Builder'), ['ada', 'bob', 'Builder']);
  });

  it('finds nothing in text without handles', () => {
    assert.deepEqual(findMentions(''), []);
    assert.deepEqual(findMentions('No mentions here.'), []);
    assert.deepEqual(findMentions('a lone @ sign'), []);
  });

  it('lists a handle once, whatever its case', () => {
    assert.deepEqual(findMentions('@bob and @Bob and @BOB and @ada'), ['bob', 'ada']);
  });

  it('does not treat an e-mail address as a mention', () => {
    assert.deepEqual(findMentions('write to ada@acme.test'), []);
    assert.deepEqual(findMentions('first.last@acme.test and x_y@acme.test'), []);
    assert.deepEqual(findMentions('ada@acme.test, cc @bob'), ['bob']);
  });

  it('finds a handle at the start of the text and of a line', () => {
    assert.deepEqual(findMentions('@ada'), ['ada']);
    assert.deepEqual(findMentions('first line\n@bob second line'), ['bob']);
  });

  it('leaves sentence punctuation out of the handle', () => {
    assert.deepEqual(findMentions('Thanks @bob.'), ['bob']);
    assert.deepEqual(findMentions('Ask @bob, @cy; @dee! (@eve) @fay?'), ['bob', 'cy', 'dee', 'eve', 'fay']);
    assert.deepEqual(findMentions("@bob's draft"), ['bob']);
  });

  it('keeps dots, hyphens and underscores inside a handle', () => {
    assert.deepEqual(findMentions('@jean-luc and @mary.ann and @the_bot'), [
      'jean-luc',
      'mary.ann',
      'the_bot',
    ]);
  });

  it('accepts a one-character handle', () => {
    assert.deepEqual(findMentions('@x is here'), ['x']);
  });

  it('ignores a handle inside inline code', () => {
    assert.deepEqual(findMentions('run `@bob` literally'), []);
  });

  it('ignores a double @ and a handle that starts with punctuation', () => {
    assert.deepEqual(findMentions('@@bob'), []);
    assert.deepEqual(findMentions('@-bob @.bob'), []);
  });
});

describe('resolveMentions', () => {
  const targets: MentionTargets = {
    people: new Map([
      ['ada', 'usr_ada'],
      ['bob', 'usr_bob'],
    ]),
    agents: ['Builder'],
  };

  it('sorts handles into people and agents', () => {
    assert.deepEqual(resolveMentions(['ada', 'Builder', 'bob'], targets), {
      personIds: ['usr_ada', 'usr_bob'],
      agents: ['Builder'],
    });
  });

  it('always knows the assistant, even with no installed agents', () => {
    assert.deepEqual(resolveMentions(['Assistant'], { people: new Map(), agents: [] }), {
      personIds: [],
      agents: [ASSISTANT],
    });
  });

  it('sends every retired handle to the assistant, once', () => {
    assert.deepEqual(RETIRED_TO_ASSISTANT, ['PM', 'Research', 'GTM']);
    for (const retired of RETIRED_TO_ASSISTANT) {
      assert.deepEqual(resolveMentions([retired], targets).agents, [ASSISTANT], retired);
    }
    assert.deepEqual(resolveMentions(['PM', 'Research', 'GTM', 'Assistant'], targets).agents, [ASSISTANT]);
  });

  it('ignores case and reports the canonical agent name', () => {
    assert.deepEqual(resolveMentions(['builder', 'ASSISTANT', 'pm'], targets), {
      personIds: [],
      agents: ['Builder', ASSISTANT],
    });
    assert.deepEqual(resolveMentions(['ADA', 'Bob'], targets).personIds, ['usr_ada', 'usr_bob']);
  });

  it('keeps agents in the order they were mentioned', () => {
    assert.deepEqual(resolveMentions(['Builder', 'Assistant'], targets).agents, ['Builder', ASSISTANT]);
    assert.deepEqual(resolveMentions(['Assistant', 'Builder'], targets).agents, [ASSISTANT, 'Builder']);
  });

  it('leaves @Agent and unknown handles as plain text', () => {
    assert.deepEqual(resolveMentions(['Agent', 'agent', 'nobody', 'Designer'], targets), {
      personIds: [],
      agents: [],
    });
  });

  it('does not know an agent that is not installed in the workspace', () => {
    assert.deepEqual(resolveMentions(['Builder'], { people: new Map(), agents: [] }), {
      personIds: [],
      agents: [],
    });
  });

  it('lists a person once when mentioned under two spellings', () => {
    const twoHandles: MentionTargets = {
      people: new Map([
        ['bob', 'usr_bob'],
        ['bobby', 'usr_bob'],
      ]),
      agents: [],
    };
    assert.deepEqual(resolveMentions(['bob', 'bobby', 'bob'], twoHandles).personIds, ['usr_bob']);
  });

  it('gives an agent handle precedence over a person with the same handle', () => {
    const clash: MentionTargets = { people: new Map([['builder', 'usr_builder']]), agents: ['Builder'] };
    assert.deepEqual(resolveMentions(['Builder'], clash), { personIds: [], agents: ['Builder'] });
  });

  it('works on what findMentions finds', () => {
    const handles = findMentions('@PM, @bob and bob@acme.test: see @Agent and @Builder');
    assert.deepEqual(resolveMentions(handles, targets), {
      personIds: ['usr_bob'],
      agents: [ASSISTANT, 'Builder'],
    });
  });
});
