import type { ModelError } from '../../model/model.ts';
import { log } from '../../observability/log.ts';
import type { Scope } from '../workspace/actor.ts';
import type { Outcome } from './requests.ts';

/** What people are told when an agent is mentioned in a workspace without a model. */
export const NO_MODEL_REPLY =
  "The assistant isn't set up in this workspace yet; an admin can connect a model in Settings.";

/** Replies for requests an agent cannot answer; each says what to do next. */
export const replies = {
  noModel(agent: string): Outcome {
    // People are told what they can do; how an operator configures a model goes to the log and
    // to Settings, where admins see it.
    log.warn(
      { agent },
      'an agent was mentioned but no model is configured: an admin connects one in Settings (Assistant model), or set TANDEM_MODEL_URL, TANDEM_MODEL and, when the endpoint needs one, TANDEM_MODEL_KEY',
    );
    return {
      status: 'failed',
      body: NO_MODEL_REPLY,
      errorCode: 'model_unavailable',
      error: 'no model is configured (TANDEM_MODEL_URL and TANDEM_MODEL are not set)',
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
