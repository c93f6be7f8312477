// The tools a worker offers when its deployment names none (AGENT_TOOLS_MODULE).
import deleteFile from './delete-file.js';
import type { AnyToolDefinition } from './define-tool.js';
import listFiles from './list-files.js';
import readFile from './read-file.js';
import research from './research.js';
import scanArchive from './scan-archive.js';

export const BUILTIN_TOOLS: readonly AnyToolDefinition[] = [listFiles, readFile, deleteFile, scanArchive, research];
