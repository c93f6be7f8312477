// `npm run model`: a real model on this machine behind an OpenAI-compatible
// endpoint (llama-server over SmolLM2-135M-Instruct), provisioned on first use.
//   MODEL_PORT (default 8081)
// Then, in another terminal:
//   LLM_BASE_URL=http://127.0.0.1:8081/v1 LLM_MODEL=smollm2-135m-instruct npm run worker
import { startLocalModel } from './local-model.js';

const port = Number(process.env.MODEL_PORT ?? 8081);
const model = await startLocalModel({ port });
console.log(`local model ${model.model} on ${model.url} (loaded in ${model.loadSeconds.toFixed(1)} s)`);
console.log(`  weights: ${model.files.model}\n  engine:  ${model.files.server}`);
console.log(`  use it:  LLM_BASE_URL=${model.url} LLM_MODEL=${model.model} npm run worker`);
const stop = () => void model.stop().then(() => process.exit(0));
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
