// `npm run mcp:tools [-- --json]`: connects to the MCP servers of
// AGENT_MCP_CONFIG now, lists their tools and prints what a worker started
// with this config would offer: the harness's name, read-only, approval, and
// the schema. A worker lists them once, at its start; run this to see what a
// server offers today (after it restarted or was upgraded).
import { readMcpConfig } from '../activities/tools/mcp/config.js';
import { loadMcpTools } from '../activities/tools/mcp/source.js';
import { toolSpecOf } from '../activities/tools/define-tool.js';
import { pluginOptionsFromEnv } from './env-options.js';

const { mcp } = pluginOptionsFromEnv().plugin;
const path = typeof mcp === 'string' ? mcp : null;
if (!path || process.argv.includes('--help')) {
  console.log('usage: AGENT_MCP_CONFIG=path/to/mcp.json npm run mcp:tools [-- --json]');
  process.exit(path ? 0 : 2);
}
let source;
try {
  source = await loadMcpTools(readMcpConfig(path));
} catch (err) {
  console.error(err instanceof Error ? err.message : String(err));
  process.exit(1);
}
const specs = source.tools.map(toolSpecOf);
if (process.argv.includes('--json')) console.log(JSON.stringify(specs, null, 2));
else {
  for (const s of source.servers) console.log(`${s.name} (${s.connection.describe()}): ${s.mcpTools.length} tools`);
  for (const s of specs) {
    console.log(`  ${s.name}  readOnly=${s.readOnly} needsApproval=${JSON.stringify(s.needsApproval)}  ${s.origin ?? ''}`);
    console.log(`    ${s.description}`);
    console.log(`    parameters: ${JSON.stringify(s.parameters)}`);
  }
}
await source.close();
