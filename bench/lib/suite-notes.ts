// What bounds each scenario's figures, from profiling (see PROFILING), rendered into bench/RESULTS.md
// under the table. Profile shares are of a thread's busy (non-idle) CPU time, from runs on the 2-core
// development machine (2026-11-22). Keep these honest and short, and update them when a profile
// changes; `npm run bench -- --render` re-renders RESULTS.md from bench/results/latest.json.

export const BOUNDS: Record<string, string> = {
  ingest: [
    '**Short: CPU per event.** Three busy threads share the two cores: the load generator (as in the',
    "baseline), Sluice's main thread (close to a full core) and its SQLite thread (about half a core). The",
    'goal needs ~5 µs of main-thread CPU per event; today it is ~20 µs. Main thread profile: per-message',
    'validation, enrichment and `JSON.stringify` ~19% (the nesting-depth walk alone 3.5%), structured-cloning',
    'the accepted messages to the store thread (`postMessage`) 15%, `JSON.parse` of the body 9%, writing the',
    "response 12%, Node's HTTP parsing ~12%, fastify routing and hooks ~5%. The SQLite thread's time goes to",
    'inserts, index upkeep and the per-message dedupe lookup. On a quiet machine synchronous=NORMAL was within',
    '2% of FULL: group commit works and fsync is not the bound. **Plan:** (1) hand the store thread one',
    'transferable buffer per group commit (payload texts + offsets) instead of cloning message objects; (2)',
    'answer /v1/batch with a pre-serialized `{"success":true}` and skip fastify\'s serialization hooks; (3)',
    'one walk per message for validation, depth check and enrichment, splicing receivedAt/context into the',
    'JSON text rather than re-stringifying; (4) one multi-row INSERT and one dedupe query per commit instead',
    'of statements per message.',
  ].join(' '),
  deliver: [
    '**Rate short: CPU per delivery on the main thread.** Both sides are one saturated thread, so the ratio is',
    "about CPU per request: Sluice's main thread spends ~3.5× what raw undici spends per POST (~160 µs against",
    '~45 µs); the goal needs under ~75 µs. Its SQLite thread runs alongside, about half busy (claims, grouped',
    'outcome writes and their fsyncs), so it is not the bound yet. Main thread profile of a',
    '60k drain (inclusive): undici request/response ~35%, including a per-request AbortController + timer and',
    'reading the 1 KB response excerpt through an async iterator with its own 250 ms timer (7.5%); HMAC-SHA1',
    'signing 7.4% (5.4% of it `createHmac` key set-up per message); shaping + re-serializing the stored',
    'message 6%; structured clones of claims and outcomes to/from the store thread 7%; GC 6.5%.',
    '**Plan:** (1) keep the message',
    'as text from ingest to socket (claim returns the stored text, shape by splicing or store the shaped body',
    'at ingest), so no JSON.parse/clone/stringify per delivery; (2) no per-request AbortController/timer:',
    "rely on the Agent's connect/headers timeouts or one shared deadline sweep; read small excerpts with one",
    'bounded read; (3) a cached KeyObject per destination secret for the HMAC; (4) claims and outcomes as',
    'compact arrays over the worker boundary. **Latency passes:** a commit wakes the engine at once, so p50 is',
    'one claim + one POST; p99 is group-commit waits and GC pauses. The first second (JIT, first connection)',
    'is measured apart as the cold-start p99 in bench/results/deliver.json.',
  ].join(' '),
  isolation: [
    'Each destination has its own in-flight slots, its own claims and its own undici pool, so the',
    'never-answering endpoint holds only its own 32 sockets until the 1 s deadline (the scenario sets',
    '`retry.requestTimeoutMs` 1000 and `deliveryLeaseMs` 3000 so it cycles; defaults are 5 s / 30 s).',
    'Its cost is ~32 timeouts a second and their retrying outcomes. The healthy nine are CPU-bound exactly',
    'as in the delivery scenario, and in the baseline the healthy 10th takes a tenth of that CPU, which the',
    'nine get when the 10th hangs: the ratio sits around 1, and run-to-run noise on a shared 2-core machine',
    'is ±20%, so a single short reading is not a regression by itself.',
  ].join(' '),
  backlog: [
    '**Drain rate: not bounded by the backlog.** Claims walk the partial index `deliveries_due` (pending and',
    'retrying rows only), so a million pending claim as fast as ten thousand; the rate is the delivery',
    "scenario's CPU bound. **Peak RSS short: V8 heap sizing, not the backlog.** Sluice is at ~170 MB RSS before",
    'delivering anything: ~67 MB file-backed (the node binary), and three V8 isolates (main, SQLite store,',
    "WAL checkpoint), each loading Node's TypeScript stripper (~11 MB each). Draining, the main thread's heap",
    'grows to ~178 MB committed with only 20–40 MB live: V8 sizes the young and old generations for the',
    "per-delivery garbage rate. The store thread's heap stays ~21 MB; SQLite's page cache is the default 2 MB.",
    'The same 1M drain with `node --max-semi-space-size=2 --max-old-space-size=64` peaked at 188 MB at the same',
    'rate (3.2k/s). **Plan:** (1) run the server with V8 heap limits (semi-space 2 MB, an old-space cap',
    'sized for ingest bursts); (2) run WAL checkpoints on the store thread between commits rather than in a',
    'third isolate; (3) the per-delivery allocation cuts of the delivery plan, which shrink what V8 reserves;',
    '(4) ship compiled JavaScript for production so no isolate loads the TypeScript stripper.',
  ].join(' '),
  client: [
    'Meets every goal, so it was not profiled further. Delivered/s is bounded by the sink (a Node HTTP server',
    "in its own process) at flushAt 20; @segment/analytics-node's heap grows with every queued call, and on this",
    'sink it re-sends batches (see its duplicates in bench/results/client.json).',
  ].join(' '),
  postgres: [
    'Reported, with machine-wide CPU per figure in bench/results/postgres.json. On two cores the API or worker',
    'processes, PostgreSQL and the load generator or receiver share the same two cores, and the CPU is',
    'saturated (busy ≥ 95%) already with one Sluice process: a second process can only take cores from the',
    "others, so two-process scaling here measures contention, not Sluice's ability to scale out.",
    "Ingest on PostgreSQL also pays a round trip per statement and PostgreSQL's own CPU per commit.",
  ].join(' '),
}

export const PROFILING = [
  '`npm run bench -- --only <scenario> --profile` runs a scenario with every process under',
  '`node --cpu-prof` (profiles in .tmp/bench-profiles/<scenario>/, worker threads included) and prints each',
  "thread's busy time by module and by function (bench/lib/suite-profile.ts; it also takes a directory or",
  ".cpuprofile files directly). Profiling slows every party, so profiled runs are not the suite's figures;",
  "the shares above are what the notes rely on. Memory: bench/backlog.ts reports the Sluice process's",
  "VmHWM, its main thread's V8 heap and the store thread's heap at the sampled peak.",
].join(' ')
