import { type ColdStats, LAMBDA_MB_PER_VCPU, REVOKE_ALL_RUNTIME, type Results } from './run';
import { DISPLAY_NAMES } from './scenarios';

const kib = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
const ms = (value: number, digits = 1) => `${value.toFixed(digits)} ms`;
const ratio = (value: number) => `${value.toFixed(2)}×`;
const operations = (byOperation: Record<string, number>) =>
  Object.entries(byOperation)
    .map(([operation, count]) => `${operation} ${Number(count.toFixed(3))}`)
    .join(', ');

function table(header: string[], align: ('l' | 'r')[], rows: string[][]): string {
  const lines = [
    `| ${header.join(' | ')} |`,
    `|${align.map((a) => (a === 'r' ? '---:' : '---')).join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ];
  return `${lines.join('\n')}\n`;
}

/** The benchmark report as Markdown: results, references, targets and what sits above each floor. */
export function renderMarkdown(r: Results): string {
  const out: string[] = [];
  out.push(
    `Node ${r.node}${r.nodes.length > 1 ? ` (cold init also on ${r.nodes.slice(1).join(', ')})` : ''} on ${r.cpu} (${r.cores} cores, load ${r.load.before.toFixed(1)} → ${r.load.after.toFixed(1)}), ` +
      `${r.date.slice(0, 16).replace('T', ' ')} UTC; ` +
      `cold init over ${r.runs} fresh processes per subject (interleaved), warm cost over ` +
      `${r.iterations.toLocaleString('en-US')} invocations after ${r.warmup.toLocaleString('en-US')} warm-up` +
      `${r.quick ? ' (--quick: no references, and through the SDK 1,000 invocations after 200)' : ''}.\n`,
  );

  out.push(
    '\n**Functions against their SDK floor** (the SDK defaults: `DynamoDBDocumentClient` with the ' +
      "SDK's default credential provider chain, bundled ESM, module first, run in Lambda's environment; " +
      "the functions' bundles leave out what Lambda never runs and run with the SDK settings the stack " +
      'deploys, see infra/bundling.ts). "Lean floor": the same floor bundled and configured as the ' +
      'functions are (full runs only).\n\n',
  );
  out.push(
    table(
      ['Function', 'Bundle', '× floor', 'Lean floor', '× floor'],
      ['l', 'r', 'r', 'r', 'r'],
      r.functions.map((f) => [
        f.name,
        kib(f.bundleBytes),
        ratio(f.bundleRatio),
        kib(f.leanFloorBytes),
        ratio(f.leanFloorBytes / f.floorBytes),
      ]),
    ),
  );
  for (const node of r.nodes) {
    out.push(`\n*Cold init on ${node}* (load and first handled event)\n\n`);
    out.push(
      table(
        ['Function', 'Median', 'p90', 'Floor median', '× floor', 'Lean floor median', '× floor'],
        ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
        r.functions.map((f) => {
          const cold = f.cold.find((c) => c.node === node);
          if (!cold) return [f.name, 'not measured', '', '', '', '', ''];
          return [
            f.name,
            ms(cold.cold.median),
            ms(cold.cold.p90),
            ms(cold.floorCold.median),
            ratio(cold.coldRatio),
            cold.leanFloorCold ? ms(cold.leanFloorCold.median) : '',
            cold.leanFloorRatio === undefined ? '' : ratio(cold.leanFloorRatio),
          ];
        }),
      ),
    );
  }
  if (r.node24Skipped !== undefined) out.push(`\nCold init on Node 24 not measured: ${r.node24Skipped}.\n`);

  out.push(
    '\n**Warm cost per request path** (zero-latency DynamoDB, one invocation at a time). ' +
      '"Stubbed at the client" (the target): the function with DynamoDB answered at `send`, i.e. the ' +
      'code this project owns. "Through the SDK" (reference): the CDK bundle with DynamoDB answered at ' +
      "`https.request`, so the SDK's signing and serialization run too; compare it with the SDK floor " +
      'of the same function.\n\n',
  );
  const floorP50 = new Map(r.floorWarm.map(({ fn, warm }) => [fn, warm.p50]));
  const warmRows = r.paths.map(({ path, warm, handlerOnly }) => {
    const floor = floorP50.get(path.function);
    return [
      path.label,
      `${warm.callsPerRequest} (${operations(warm.byOperation)})`,
      ms(handlerOnly.p50, 3),
      ms(handlerOnly.p99, 3),
      ms(warm.p50, 3),
      ms(warm.p99, 3),
      floor === undefined ? '' : ratio(warm.p50 / floor),
    ];
  });
  for (const { fn, warm } of r.floorWarm) {
    warmRows.push([
      `SDK floor of ${DISPLAY_NAMES[fn]} (reference)`,
      `${warm.callsPerRequest} (${operations(warm.byOperation)})`,
      '',
      '',
      ms(warm.p50, 3),
      ms(warm.p99, 3),
      '',
    ]);
  }
  out.push(
    table(
      [
        'Path',
        'DynamoDB calls / request',
        'Stubbed at the client p50',
        'p99',
        'Through the SDK p50',
        'p99',
        'p50 × floor',
      ],
      ['l', 'l', 'r', 'r', 'r', 'r', 'r'],
      warmRows,
    ),
  );

  out.push('\n**References** (same run)\n\n');
  const coldCells = (stats: ColdStats | undefined) =>
    stats ? [ms(stats.median), ms(stats.p90)] : ['not measured', ''];
  const refRows: string[][] = [];
  for (const f of r.functions) {
    refRows.push([
      `SDK floor of ${f.name}, ESM (module first), on ${f.cold[0]?.node ?? ''}`,
      kib(f.floorBytes),
      ...coldCells(f.cold[0]?.floorCold),
    ]);
    // The CommonJS floors' cold init is measured for the reference functions only (REFERENCE_FUNCTIONS).
    if (f.cjsFloorCold || r.quick) {
      refRows.push([
        `SDK floor of ${f.name}, CommonJS (main first)`,
        kib(f.cjsFloorBytes),
        ...coldCells(f.cjsFloorCold),
      ]);
    }
  }
  refRows.push(['Empty handler', kib(r.empty.bytes), ...coldCells(r.empty.cold)]);
  for (const f of r.functions) {
    if (!f.sourceMapsCold) continue;
    const extra = f.sourceMapsCold.median - (f.cold[0]?.cold.median ?? Number.NaN);
    refRows.push([
      `${f.name} with NODE_OPTIONS=--enable-source-maps (not deployed; it would add ${ms(extra)})`,
      kib(f.bundleBytes),
      ...coldCells(f.sourceMapsCold),
    ]);
  }
  out.push(table(['Bundle', 'Size', 'Cold init median', 'p90'], ['l', 'r', 'r', 'r'], refRows));

  const { revokeAll } = r;
  const memoryMb = REVOKE_ALL_RUNTIME.memoryMb;
  const vcpu = memoryMb / LAMBDA_MB_PER_VCPU;
  out.push(
    `\n**Revoke-all** (\`POST /api/embed/sessions/revoke\` for one user whose sessions are each in two ` +
      `scopes, the caller's organization and its own): the CDK bundle freshly loaded, through the SDK, ` +
      `every DynamoDB call answered after ${revokeAll.latencyMs} ms, the ${revokeAll.concurrency} write shards ` +
      `of each scope index read in parallel (SCOPE_WRITE_SHARDS), Lambda time ${revokeAll.timeoutMs / 1000} s (the function timeout) ` +
      `and the 5 s request budget; median of ${revokeAll.results[0]?.runs.length ?? 0} run(s). "Writes": ` +
      `the cut-off writes (UpdateItem, one write unit each). "CPU at ${memoryMb} MB" ` +
      `scales this machine's CPU time by Lambda's share of a vCPU at that memory ` +
      `(${vcpu.toFixed(2)} vCPU): a rough lower bound of the same work there, if a Lambda vCPU were as ` +
      `fast as this one. "Own" leaves out the time the in-process DynamoDB stub spent answering (running ` +
      `each query on its tables and writing the answer): DynamoDB's work, on its servers in production.\n\n`,
  );
  out.push(
    table(
      [
        'Sessions',
        'Writes',
        'DynamoDB calls',
        'Wall time',
        'CPU time',
        'of which DynamoDB stub',
        'Own wall time',
        'Own CPU time',
        `Own CPU at ${memoryMb} MB (estimate)`,
        'Per session',
      ],
      ['r', 'r', 'l', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
      revokeAll.results.map((result) => [
        result.sessions.toLocaleString('en-US'),
        String(result.byOperation.UpdateItem ?? 0),
        `${result.calls.toLocaleString('en-US')} (${operations(result.byOperation)})`,
        ms(result.ms, 0),
        ms(result.cpuMs, 0),
        ms(result.ms - result.ownMs, 0),
        ms(result.ownMs, 0),
        ms(result.ownCpuMs, 0),
        ms(result.ownCpuMs / vcpu, 0),
        ms(result.ownMs / result.sessions, 3),
      ]),
    ),
  );

  out.push('\n**Targets**\n\n');
  out.push(
    table(
      ['Target', 'Goal', 'Measured', 'Result'],
      ['l', 'l', 'r', 'l'],
      r.targets.map((t) => [t.name, t.goal, t.value, t.pass ? 'PASS' : '**FAIL**']),
    ),
  );

  out.push(
    '\n**What each bundle holds beyond its lean floor** (the floor bundled as the functions are; bytes ' +
      'in the minified output)\n\n',
  );
  for (const f of r.functions) {
    const total = f.bundleBytes - f.leanFloorBytes;
    const top = f.aboveFloor
      .slice(0, 8)
      .map((e) => `${e.source} ${kib(e.bytes)}`)
      .join(', ');
    out.push(`- ${f.name}: +${kib(total)}: ${top}\n`);
  }
  return out.join('');
}
