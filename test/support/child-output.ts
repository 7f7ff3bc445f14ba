import type { ChildProcess } from 'node:child_process';

/**
 * Everything a child process prints, stdout and stderr as they arrive: what a start-up waits for, and
 * what its failure message shows.
 */
export function collectOutput(child: ChildProcess): () => string {
  let text = '';
  const append = (chunk: Buffer) => {
    text += chunk.toString();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  return () => text;
}
