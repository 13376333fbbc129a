import type { ModelError } from '../../model/model.ts';
import type { Scope } from '../workspace/actor.ts';
import type { Outcome } from './requests.ts';

/** Replies for requests an agent cannot answer; each says what to do next. */
export const replies = {
  noModel(agent: string): Outcome {
    return {
      status: 'failed',
      body: [
        `I can't answer yet: no model is configured for this workspace.`,
        `An admin can set one by starting Tandem with \`TANDEM_MODEL_URL\` (an OpenAI-compatible endpoint, e.g. \`https://api.openai.com/v1\`), \`TANDEM_MODEL\` (the model's name) and, when the endpoint needs one, \`TANDEM_MODEL_KEY\`. Then mention @${agent} again.`,
      ].join('\n\n'),
      errorCode: 'model_unavailable',
      error: 'no model is configured',
    };
  },

  modelFailed(agent: string, error: ModelError): Outcome {
    const why = error.timedOut ? error.message : 'the call to the model failed';
    return {
      status: 'failed',
      body: `Sorry, this request failed: ${why}. Mention @${agent} again to retry.`,
      errorCode: error.timedOut ? 'model_timeout' : 'model_failed',
      error: error.message,
    };
  },

  noScope(agent: string, scope: Scope): Outcome {
    return {
      status: 'failed',
      body: `I can't do this: the app or token that mentioned me is not allowed \`${scope}\`, and I act with no more than it may. Mention @${agent} again from the Tandem app, or from a connection allowed \`${scope}\`.`,
      errorCode: 'insufficient_scope',
      error: `the mention's credential does not carry ${scope}`,
    };
  },

  noAccess(name: string): Outcome {
    return {
      status: 'failed',
      body: `I can't answer: ${name} can no longer open this.`,
      errorCode: 'not_found',
      error: 'the person who asked can no longer open the artifact',
    };
  },

  crashed(agent: string, times: number): Outcome {
    return {
      status: 'failed',
      body: `Sorry, this request failed: the worker answering it stopped ${times} times. Mention @${agent} again to retry.`,
      errorCode: 'crashed',
      error: `the worker answering it stopped ${times} times`,
    };
  },
};
