// The tools a worker offers when its deployment names none (AGENT_TOOLS_MODULES).
import deleteFile from './delete-file.js';
import type { AnyToolDefinition } from './define-tool.js';
import listFiles from './list-files.js';
import readFile from './read-file.js';
import research from './research.js';
import scanArchive from './scan-archive.js';

/** The tools every worker offers unless told otherwise: list_files, read_file, delete_file, scan_archive, research. */
export const BUILTIN_TOOLS: readonly AnyToolDefinition[] = [listFiles, readFile, deleteFile, scanArchive, research];
