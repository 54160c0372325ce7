import type { Action } from '@sluice/core';
import { z } from 'zod';
import { parseAnswer, postOpenAi } from './openai-client.js';

/** What an evaluator must answer (JSON mode): anything else is an error, never a pass. */
const Verdict = z.strictObject({ flagged: z.boolean(), reason: z.string().max(4096) });
export type GuardrailVerdict = z.infer<typeof Verdict>;

const ChatAnswer = z.object({ choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1) });

export interface Evaluator {
  policy: string;
  model: string;
  temperature: number;
  maxTokens: number;
}

export interface LlmGuardrailOptions {
  endpoint: string;
  apiKey: string | undefined;
  timeoutMs: number;
  evaluators: ReadonlyMap<string, Evaluator>;
}

/** An evaluator name that is not configured. */
export class UnknownEvaluator extends Error {}

/**
 * The LLM guardrail: asks an OpenAI-compatible chat model (JSON mode) whether an action breaks
 * an evaluator's policy. The model sees the action's namespace, tenant, provider, type and payload.
 */
export class LlmGuardrail {
  constructor(private readonly opts: LlmGuardrailOptions) {}

  async evaluate(evaluatorName: string, action: Action): Promise<GuardrailVerdict> {
    const evaluator = this.opts.evaluators.get(evaluatorName);
    if (!evaluator) throw new UnknownEvaluator(`llm_guardrail evaluator ${evaluatorName} is not configured`);
    const subject = { namespace: action.namespace, tenant: action.tenant, provider: action.provider, action_type: action.action_type, payload: action.payload };
    const answer = parseAnswer(
      ChatAnswer,
      await postOpenAi(
        this.opts.endpoint,
        '/chat/completions',
        {
          model: evaluator.model,
          temperature: evaluator.temperature,
          max_tokens: evaluator.maxTokens,
          response_format: { type: 'json_object' },
          messages: [
            { role: 'system', content: `${evaluator.policy}\n\nAnswer only with a JSON object {"flagged": boolean, "reason": string}.` },
            { role: 'user', content: JSON.stringify(subject) },
          ],
        },
        { apiKey: this.opts.apiKey, timeoutMs: this.opts.timeoutMs },
      ),
      'the chat answer',
    );
    const content = (answer.choices[0] as { message: { content: string } }).message.content;
    let parsed: unknown;
    try {
      parsed = JSON.parse(content);
    } catch {
      throw new Error('the evaluator answered something that is not JSON');
    }
    return parseAnswer(Verdict, parsed, "the evaluator's answer");
  }
}
