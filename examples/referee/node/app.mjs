// The Node clients that ../run.sh runs under `ptuprobe referee`, each with
// its SDK's default retries (2): openai-node's OpenAI (--sdk openai, the
// openai dialect), its AzureOpenAI (--sdk azure, the azure dialect; --sdk
// azure-responses for the Responses API) and @anthropic-ai/sdk (--sdk anthropic, the anthropic dialect). Options come
// from the environment the referee sets (OPENAI_BASE_URL but in azure, OPENAI_API_KEY,
// AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY, OPENAI_API_VERSION,
// ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY). --workers workers make --calls
// calls each, every call its own prompt, so the witness never takes one
// worker's first attempt for another's retry.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { AzureOpenAI } from 'openai';
import { parseArgs } from 'node:util';

const { values: opt } = parseArgs({
  options: {
    sdk: { type: 'string', default: 'openai' },
    workers: { type: 'string', default: '8' },
    calls: { type: 'string', default: '5' },
  },
});

const clients = {
  openai() {
    const c = new OpenAI();
    return (prompt) =>
      c.chat.completions.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: prompt }] });
  },
  azure() {
    // As Azure's documents write it, the endpoint given: the referee sets
    // no OPENAI_BASE_URL in the azure dialect, which AzureOpenAI would take
    // over it (src/azure.ts: "baseURL and endpoint are mutually exclusive").
    const c = new AzureOpenAI({
      endpoint: process.env.AZURE_OPENAI_ENDPOINT,
      apiKey: process.env.AZURE_OPENAI_API_KEY,
      apiVersion: process.env.OPENAI_API_VERSION,
      deployment: 'gpt-4o',
    });
    return (prompt) =>
      c.chat.completions.create({ model: 'gpt-4o', max_tokens: 10, messages: [{ role: 'user', content: prompt }] });
  },
  'azure-responses'() {
    // responses.create: AzureOpenAI posts it to /openai/responses?api-version=.
    // Options from the environment alone (AZURE_OPENAI_ENDPOINT…).
    const c = new AzureOpenAI({ deployment: 'gpt-4o' });
    return (prompt) => c.responses.create({ model: 'gpt-4o', max_output_tokens: 10, input: prompt });
  },
  anthropic() {
    const c = new Anthropic();
    return (prompt) =>
      c.messages.create({ model: 'claude-sonnet-4-5', max_tokens: 10, messages: [{ role: 'user', content: prompt }] });
  },
};

const make = clients[opt.sdk];
if (!make) {
  console.error(`--sdk ${opt.sdk}: want openai, azure, azure-responses or anthropic`);
  process.exit(2);
}
const call = make();
const workers = Number(opt.workers);
const calls = Number(opt.calls);
let failed = 0;
await Promise.all(
  Array.from({ length: workers }, async (_, w) => {
    for (let c = 0; c < calls; c++) {
      try {
        await call(`call ${w}-${c}: say hello`);
      } catch {
        failed++;
      }
    }
  }),
);
console.error(`referee-node --sdk ${opt.sdk}: ${failed} of ${workers * calls} calls failed`);
