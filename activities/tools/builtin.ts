// The tools a worker offers when its deployment names none (AGENT_TOOLS_MODULE).
import deleteFile from './delete-file';
import type { AnyToolDefinition } from './define-tool';
import listFiles from './list-files';
import readFile from './read-file';
import research from './research';
import scanArchive from './scan-archive';

export const BUILTIN_TOOLS: readonly AnyToolDefinition[] = [listFiles, readFile, deleteFile, scanArchive, research];
