// The peer's tool, doing the same work as ours: list the seeded workspace.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ensureWorkspace } from '../../activities/tools/workspace';

export function createPeerActivities(workspaceRoot: string) {
  return {
    async peerListFiles(): Promise<string> {
      const root = ensureWorkspace(workspaceRoot, 'peer');
      return readdirSync(root)
        .map((f) => `${f} (${statSync(join(root, f)).size} bytes)`)
        .join('\n');
    },
  };
}

export type PeerActivities = ReturnType<typeof createPeerActivities>;
