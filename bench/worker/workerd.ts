// Looking at workerd from outside while a benchmark drives it (Linux): the workerd process
// Miniflare spawned (a child of this Node process), the CPU time of its threads
// (/proc/PID/task/*/schedstat, nanoseconds on CPU), its resident memory, and through its
// inspector (V8's DevTools protocol, `startWorker(…, { inspector: true })`) one Worker's isolate:
// its V8 heap and a CPU profile, which leaves out what the local R2 and Cache API simulators
// (Durable Objects in the same process) spend. Node 20 needs --experimental-websocket for the
// inspector (bench/worker/vitest.config.ts passes it).
import { readdirSync, readFileSync } from "node:fs";
import type { Miniflare } from "miniflare";

/** The pids of the workerd processes this Node process started. */
export function workerdChildren(): Set<number> {
  const pids = new Set<number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …: comm may hold spaces, so split after its closing parenthesis.
      const comm = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (comm === "workerd" && ppid === process.pid) pids.add(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** The one workerd started since `before` was taken. */
export function newWorkerd(before: Set<number>): number {
  const started = [...workerdChildren()].filter((pid) => !before.has(pid));
  if (started.length !== 1) throw new Error(`expected one new workerd child, found ${started.length}`);
  return started[0];
}

/** Nanoseconds each thread of `pid` has run, by thread id, with the thread's name. */
export function threadCpu(pid: number): Map<number, { name: string; ns: number }> {
  const threads = new Map<number, { name: string; ns: number }>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const ns = Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, "utf8").trim();
      threads.set(Number(tid), { name, ns });
    } catch {
      // The thread ended while we looked.
    }
  }
  return threads;
}

/** CPU time of the whole process since `before` (threads started since count from zero), ms. */
export function cpuSinceMs(pid: number, before: Map<number, { ns: number }>): number {
  let ns = 0;
  for (const [tid, { ns: now }] of threadCpu(pid)) ns += now - (before.get(tid)?.ns ?? 0);
  return ns / 1e6;
}

/** CPU ms of the process's main thread (workerd runs its isolates' JavaScript and wasm there)
 * and of all its other threads (V8's background compilers and GC helpers, I/O) since `before`. */
export function cpuSplitMs(pid: number, before: Map<number, { ns: number }>): { main: number; others: number } {
  let main = 0;
  let others = 0;
  for (const [tid, { ns: now }] of threadCpu(pid)) {
    const delta = (now - (before.get(tid)?.ns ?? 0)) / 1e6;
    if (tid === pid) main += delta;
    else others += delta;
  }
  return { main, others };
}

/** Resident set size of `pid` in bytes. */
export function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith("VmRSS:"));
  return Number(line?.split(/\s+/)[1] ?? 0) * 1024;
}

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url?: string };
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** A DevTools-protocol session with one Worker's isolate in workerd. */
export class Inspector {
  private next = 1;
  private waiting = new Map<number, (message: { result?: unknown; error?: { message: string } }) => void>();

  private constructor(private socket: WebSocket) {
    socket.addEventListener("message", (event) => {
      const message = JSON.parse(String(event.data));
      const resolve = this.waiting.get(message.id);
      if (resolve) {
        this.waiting.delete(message.id);
        resolve(message);
      }
    });
  }

  /** The ids of workerd's inspector targets: one isolate each (the Worker's is `core:user:NAME`;
   * Miniflare's own are its entry, the local R2 and Cache API, …). */
  static async targets(mf: Miniflare): Promise<string[]> {
    const base = await mf.getInspectorURL();
    const targets: { id: string }[] = await (await fetch(`http://${base.host}/json/list`)).json();
    return targets.map((t) => t.id);
  }

  /** Connects to the isolate of the Worker named `worker` (Miniflare names the first one `""`),
   * or to the target of that id. */
  static async connect(mf: Miniflare, worker = ""): Promise<Inspector> {
    const base = await mf.getInspectorURL();
    const http = `http://${base.host}`;
    const targets: { id: string; title?: string; webSocketDebuggerUrl?: string }[] = await (await fetch(`${http}/json/list`)).json();
    const names = [`core:user:${worker}`, worker];
    const target = targets.find((t) => names.includes(t.id) || names.includes(t.title ?? "")) ?? (worker === "" ? targets[0] : undefined);
    if (!target) throw new Error(`no inspector target for worker ${JSON.stringify(worker)} among ${JSON.stringify(targets.map((t) => t.id))}`);
    const url = target.webSocketDebuggerUrl ?? `ws://${base.host}/${target.id}`;
    const socket = new WebSocket(url);
    await new Promise((resolve, reject) => {
      socket.addEventListener("open", resolve, { once: true });
      socket.addEventListener("error", () => reject(new Error(`cannot open the inspector at ${url}`)), { once: true });
    });
    return new Inspector(socket);
  }

  /** Sends one protocol command and waits for its answer. */
  async send<T>(method: string, params: Record<string, unknown> = {}): Promise<T> {
    const id = this.next++;
    const answer = new Promise<{ result?: unknown; error?: { message: string } }>((resolve) => this.waiting.set(id, resolve));
    this.socket.send(JSON.stringify({ id, method, params }));
    const message = await answer;
    if (message.error) throw new Error(`${method}: ${message.error.message}`);
    return message.result as T;
  }

  /** The isolate's V8 heap: bytes used and the heap's size. */
  async heap(): Promise<{ usedBytes: number; totalBytes: number }> {
    const { usedSize, totalSize } = await this.send<{ usedSize: number; totalSize: number }>("Runtime.getHeapUsage");
    return { usedBytes: usedSize, totalBytes: totalSize };
  }

  /** Starts V8's sampling profiler (every `intervalUs`). */
  async startProfile(intervalUs = 100) {
    await this.send("Profiler.enable");
    await this.send("Profiler.setSamplingInterval", { interval: intervalUs });
    await this.send("Profiler.start");
  }

  /** Stops the profiler: the ms the isolate was busy since it started (samples other than
   * "(idle)", each counted for the time to the next one) and the self ms per function, most
   * first; the busy samples and the self samples per function (V8 samples an isolate only while
   * it runs, so the time to the next sample may hold time the isolate waited); the profile. */
  async stopProfile(): Promise<{ busyMs: number; busySamples: number; top: [string, number][]; topSamples: [string, number][]; profile: Profile }> {
    const { profile } = await this.send<{ profile: Profile }>("Profiler.stop");
    const idle = new Set(profile.nodes.filter((n) => n.callFrame.functionName === "(idle)").map((n) => n.id));
    const names = new Map(profile.nodes.map((n) => [n.id, n.callFrame.functionName || "(anonymous)"]));
    const self = new Map<string, number>();
    const selfSamples = new Map<string, number>();
    let us = 0;
    let busySamples = 0;
    // timeDeltas[i] is the time from sample i-1 to sample i: the time sample i-1 stands for.
    for (let i = 1; i < profile.samples.length; i++) {
      const node = profile.samples[i - 1];
      if (idle.has(node)) continue;
      busySamples++;
      us += profile.timeDeltas[i];
      const name = names.get(node) ?? "?";
      selfSamples.set(name, (selfSamples.get(name) ?? 0) + 1);
      self.set(name, (self.get(name) ?? 0) + profile.timeDeltas[i] / 1000);
    }
    const mostFirst = (counts: Map<string, number>) => [...counts.entries()].sort((a, b) => b[1] - a[1]);
    return { busyMs: us / 1000, busySamples, top: mostFirst(self), topSamples: mostFirst(selfSamples), profile };
  }

  /** Runs `work` under V8's sampling profiler; returns its result, the ms the isolate was busy
   * meanwhile and the functions it was busy in (self ms, most first). */
  async busyMs<T>(work: () => Promise<T>, intervalUs = 100): Promise<{ result: T; busyMs: number; top: [string, number][] }> {
    await this.startProfile(intervalUs);
    const result = await work();
    const { busyMs, top } = await this.stopProfile();
    return { result, busyMs, top };
  }

  close() {
    this.socket.close();
  }
}
