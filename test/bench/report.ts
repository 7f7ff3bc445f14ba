import type { HandOffCase } from './handoff';
import type { Goal, Results } from './run';

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (value: number) => `${value.toFixed(1)} ms`;
const ratio = (value: number) => `${value.toFixed(2)}×`;

/** The report as Markdown: the run, each function against its floor, the goals. */
export function renderMarkdown(results: Results): string {
  const lines: string[] = [];
  lines.push(
    `Cold init on ${results.node} (${results.runs} fresh processes per subject, interleaved with the floors, ` +
      `${results.floors === 'split' ? 'split into chunks as the functions are: no goal is judged' : 'each in one file'}), ` +
      `${results.cpu} (${results.cores} cores, load ${results.load.before.toFixed(1)} → ${results.load.after.toFixed(1)}), ` +
      `${results.date.slice(0, 16).replace('T', ' ')} UTC.`,
    '',
    '| Function | Cold path | Bundle | Loaded at start | Size floor | × floor | Cold init median | p90 | Floor median | × floor (median of rounds) |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|',
  );
  for (const f of results.functions) {
    lines.push(
      `| ${f.name} | ${f.coldPath} | ${kib(f.bundleBytes)} | ${kib(f.bundleBytesAtStart)} | ${kib(f.floorBytes)} | ${ratio(f.bundleRatio)} | ` +
        `${ms(f.cold.median)} | ${ms(f.cold.p90)} | ${ms(f.floorCold.median)} | ${ratio(f.coldRatio)} |`,
    );
  }
  const warm = results.functions.filter((f) => f.warm !== undefined);
  if (warm.length > 0) {
    lines.push(
      '',
      '| Function | Warm loads per process | Warm load median | DynamoDB calls per warm load |',
      '|---|---:|---:|---|',
    );
    for (const f of warm) {
      const calls = Object.entries(f.warm?.callsPerLoad ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([operation, count]) => `${operation} ${count.toFixed(2)}`)
        .join(', ');
      lines.push(`| ${f.name} | ${f.warm?.loads} | ${ms(f.warm?.median ?? Number.NaN)} | ${calls} |`);
    }
  }
  lines.push('', handOffTable(results.handOff), goalTable(results.goals));
  return lines.join('\n');
}

/** The hand-off's report alone (`npm run bench -- --only handoff`). */
export function renderHandOff(cases: HandOffCase[], goals: Goal[]): string {
  return [handOffTable(cases), goalTable(goals)].join('\n');
}

function handOffTable(cases: HandOffCase[]): string {
  const lines = [
    'Webhook hand-off, 15 ms per SQS call:',
    '',
    '| Case | SQS calls | Median | Slowest |',
    '|---|---:|---:|---:|',
  ];
  for (const c of cases) lines.push(`| ${c.name} | ${c.sqsCalls} | ${ms(c.medianMs)} | ${ms(c.maxMs)} |`);
  lines.push('');
  return lines.join('\n');
}

function goalTable(goals: Goal[]): string {
  const lines = ['| Goal | Measured | Result |', '|---|---:|---|'];
  for (const goal of goals)
    lines.push(`| ${goal.name} | ${goal.value} | ${goal.pass ? 'met' : '**missed**'} |`);
  lines.push('');
  return lines.join('\n');
}
