/**
 * `npm run bench [-- --quick] [--runs N] [--only fn,fn]`: each function's cold init on Node 24 against its
 * SDK floor, and its bundle size against the floor's; the embed page's warm loads too (the same process,
 * after its cold start). See docs/performance.md for the goals and the method.
 * Prints a Markdown report and writes .bench/results.json and .bench/results.md. Exits 0 when a goal is
 * missed (it reports, it does not judge); exits 1 only when the benchmark itself is broken or cannot run.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { node24 } from '#test/support/node24';
import { GOALS } from './floor';
import { HAND_OFF_GOAL_MS, type HandOffCase, measureHandOff, SQS_STUB_LATENCY_MS } from './handoff';
import { BenchBroken, type ColdSample, quantile } from './measure';
import { renderHandOff, renderMarkdown } from './report';
import { BENCH_FUNCTIONS, type BenchFunction, COLD_PATHS, DISPLAY_NAMES } from './scenarios';
import { callsOf, prepareSubjects, startOnce } from './subjects';

const ROOT = join(import.meta.dirname, '..', '..');
const OUT = join(ROOT, '.bench');

/** Cold-init statistics of one subject over all rounds (ms). */
export interface ColdStats {
  median: number;
  p90: number;
  importMedian: number;
  samples: number[];
}

export interface FunctionResult {
  fn: BenchFunction;
  name: string;
  coldPath: string;
  /** The function's entry and chunks. */
  bundleBytes: number;
  /** Of which its entry and the chunks it imports statically, which a cold start loads. */
  bundleBytesAtStart: number;
  floorBytes: number;
  bundleRatio: number;
  cold: ColdStats;
  floorCold: ColdStats;
  /** Median over rounds of (function / floor), the two measured back to back in the same round. */
  coldRatio: number;
  /** For the functions measured warm too: the median over processes of each one's median warm load. */
  warm?: { loads: number; median: number; callsPerLoad: Record<string, number> };
}

/**
 * The loads each process of the embed page handles after its cold start, to time its warm path (with the
 * board cache, most of them within the second its board is kept).
 */
const WARM_LOADS: Partial<Record<BenchFunction, number>> = { embedPage: 200 };

export interface Goal {
  name: string;
  value: string;
  pass: boolean;
}

export interface Results {
  date: string;
  node: string;
  cpu: string;
  cores: number;
  /** 1-minute load average before and after: other work on the machine shows up here. */
  load: { before: number; after: number };
  runs: number;
  /** How the floors were bundled: in one file (the goals' reference), or split as the functions are. */
  floors: 'one file' | 'split';
  functions: FunctionResult[];
  /** The webhook hand-off's cases, with a 15 ms SQS stub. */
  handOff: HandOffCase[];
  goals: Goal[];
}

function options() {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      runs: { type: 'string' },
      only: { type: 'string' },
      // The floors split into chunks as the functions are, instead of the goals' one-file reference.
      'split-floors': { type: 'boolean', default: false },
    },
  });
  const runs = values.runs === undefined ? (values.quick ? 15 : 30) : Number(values.runs);
  if (!Number.isInteger(runs) || runs < 5) throw new Error(`--runs: an integer ≥ 5, got ${values.runs}`);
  // `--only embedPage,createSession`: those functions alone, to measure one change without the others;
  // `--only handoff`: the webhook hand-off alone.
  const only = values.only?.split(',').map((name) => name.trim());
  const handOffOnly = only?.length === 1 && only[0] === 'handoff';
  const unknown = handOffOnly
    ? []
    : (only?.filter((name) => !(BENCH_FUNCTIONS as string[]).includes(name)) ?? []);
  if (unknown.length > 0)
    throw new Error(`--only: no function ${unknown.join(', ')} (handoff, ${BENCH_FUNCTIONS.join(', ')})`);
  const functions =
    only && !handOffOnly ? BENCH_FUNCTIONS.filter((fn) => only.includes(fn)) : BENCH_FUNCTIONS;
  return { runs, functions, handOffOnly, splitFloors: values['split-floors'] };
}

function coldStats(samples: ColdSample[]): ColdStats {
  const ms = samples.map((s) => s.ms);
  return {
    median: quantile(ms, 0.5),
    p90: quantile(ms, 0.9),
    importMedian: quantile(
      samples.map((s) => s.importMs),
      0.5,
    ),
    samples: ms,
  };
}

function log(line: string): void {
  process.stderr.write(`bench: ${line}\n`);
}

async function main(): Promise<void> {
  const { runs, functions: measured, handOffOnly, splitFloors } = options();
  log(`webhook hand-off with a ${SQS_STUB_LATENCY_MS} ms SQS stub: ${runs} runs of each case`);
  const handOff = await measureHandOff(runs);
  if (handOffOnly) {
    const goals = handOffGoals(handOff);
    process.stdout.write(renderHandOff(handOff, goals));
    return;
  }
  const node = node24();
  if (node.path === undefined) throw new BenchBroken(`cold init is measured on Node 24: ${node.missing}`);
  const nodeVersion = execFileSync(node.path, ['--version'], { encoding: 'utf8' }).trim();
  if (!nodeVersion.startsWith('v24.')) throw new BenchBroken(`${node.path} is Node ${nodeVersion}, not 24`);
  const loadBefore = loadavg()[0] ?? 0;

  log('building the functions and their SDK floors');
  const { bundles, subjects } = await prepareSubjects(ROOT, OUT, measured, WARM_LOADS, { splitFloors });
  const samples = new Map<string, ColdSample[]>(subjects.map((subject) => [subject.id, []]));
  log(`cold init on Node ${nodeVersion}: ${runs} rounds of ${subjects.length} fresh processes`);
  // Each round runs every subject once, each function next to its floor; the order is reversed every
  // other round so neither always goes first. Round 0 warms the file cache and is not recorded.
  for (let round = 0; round <= runs; round++) {
    const order = round % 2 === 0 ? subjects : [...subjects].reverse();
    for (const subject of order) {
      const sample = await startOnce(node.path, subject);
      if (round > 0) samples.get(subject.id)?.push(sample);
    }
    if (round > 0 && round % 5 === 0) log(`round ${round}/${runs}`);
  }

  const functions = measured.map((fn): FunctionResult => {
    const own = samples.get(`fn:${fn}`) ?? [];
    const floor = samples.get(`floor:${fn}`) ?? [];
    // The floor stands for the function's cold path only if it makes the same DynamoDB calls.
    if (callsOf(own[0]) !== callsOf(floor[0])) {
      throw new BenchBroken(
        `${fn}'s cold path makes the calls ${callsOf(own[0])}, its floor ${callsOf(floor[0])}`,
      );
    }
    return {
      fn,
      name: DISPLAY_NAMES[fn],
      coldPath: COLD_PATHS[fn].label,
      bundleBytes: bundles.functions[fn].bytes,
      bundleBytesAtStart: bundles.functions[fn].bytesAtStart,
      floorBytes: bundles.sizeFloors[fn].bytes,
      bundleRatio: bundles.functions[fn].bytes / bundles.sizeFloors[fn].bytes,
      cold: coldStats(own),
      floorCold: coldStats(floor),
      coldRatio: quantile(
        own.map((sample, i) => sample.ms / (floor[i]?.ms ?? Number.NaN)),
        0.5,
      ),
      ...warmOf(fn, own),
    };
  });

  const results: Results = {
    date: new Date().toISOString(),
    node: `Node ${nodeVersion}`,
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    load: { before: loadBefore, after: loadavg()[0] ?? 0 },
    runs,
    floors: splitFloors ? 'split' : 'one file',
    functions,
    handOff,
    // The goals are set against one-file floors; against split ones the run is for information.
    goals: [...(splitFloors ? [] : goalsOf(functions)), ...handOffGoals(handOff)],
  };
  const markdown = renderMarkdown(results);
  writeFileSync(join(OUT, 'results.json'), `${JSON.stringify(results, null, 2)}\n`);
  writeFileSync(join(OUT, 'results.md'), markdown);
  process.stdout.write(markdown);
  const missed = results.goals.filter((goal) => !goal.pass).length;
  process.stdout.write(
    `\n${missed === 0 ? 'Every goal met.' : `${missed} goal(s) missed.`} Written to .bench/results.{md,json}\n`,
  );
}

function warmOf(fn: BenchFunction, samples: ColdSample[]): Pick<FunctionResult, 'warm'> {
  const loads = WARM_LOADS[fn] ?? 0;
  const measured = samples.filter((sample) => sample.warmMedianMs !== undefined);
  if (loads === 0 || measured.length === 0) return {};
  const calls: Record<string, number> = {};
  for (const sample of measured)
    for (const [operation, count] of Object.entries(sample.warmCalls ?? {}))
      calls[operation] = (calls[operation] ?? 0) + count / (loads * measured.length);
  return {
    warm: {
      loads,
      median: quantile(
        measured.map((sample) => sample.warmMedianMs ?? Number.NaN),
        0.5,
      ),
      callsPerLoad: calls,
    },
  };
}

/** The hand-off's goal: its first case (one event of an owner at the cap), its slowest run. */
function handOffGoals(cases: HandOffCase[]): Goal[] {
  const atCap = cases[0];
  if (!atCap) throw new BenchBroken('the webhook hand-off was not measured');
  return [
    {
      name: `webhook hand-off: ${atCap.name} ≤ ${HAND_OFF_GOAL_MS} ms with a ${SQS_STUB_LATENCY_MS} ms SQS stub (slowest run)`,
      value: `${atCap.maxMs.toFixed(1)} ms`,
      pass: atCap.maxMs <= HAND_OFF_GOAL_MS,
    },
  ];
}

function goalsOf(functions: FunctionResult[]): Goal[] {
  return functions.flatMap((f) => {
    const coldGoal = f.fn === 'embedPage' ? GOALS.embedPageColdInitRatio : GOALS.coldInitRatio;
    return [
      {
        name: `${f.name}: cold init ≤ ${coldGoal.toFixed(2)}× its floor on Node 24`,
        value: `${f.coldRatio.toFixed(3)}×`,
        pass: f.coldRatio <= coldGoal,
      },
      {
        name: `${f.name}: bundle ≤ ${GOALS.bundleRatio.toFixed(2)}× its floor`,
        value: `${f.bundleRatio.toFixed(3)}×`,
        pass: f.bundleRatio <= GOALS.bundleRatio,
      },
    ];
  });
}

main().catch((error: unknown) => {
  console.error(error instanceof BenchBroken ? `benchmark broken: ${error.message}` : error);
  process.exit(1);
});
