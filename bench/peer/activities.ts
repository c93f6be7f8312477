// The peer's tools, doing the same work as ours: list the seeded workspace,
// read one of its files.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureWorkspace, resolveInside } from '../../activities/tools/workspace';

export function createPeerActivities(workspaceRoot: string) {
  return {
    async peerListFiles(): Promise<string> {
      const root = ensureWorkspace(workspaceRoot, 'peer');
      return readdirSync(root)
        .map((f) => `${f} (${statSync(join(root, f)).size} bytes)`)
        .join('\n');
    },
    async peerReadFile(path: string): Promise<string> {
      const root = ensureWorkspace(workspaceRoot, 'peer');
      return readFileSync(resolveInside(root, path), 'utf8');
    },
  };
}

export type PeerActivities = ReturnType<typeof createPeerActivities>;
