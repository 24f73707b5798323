'use strict';
// What the scenarios against harvest-master --listen share: the master and harvest-agent
// processes they start on loopback, npm's mesos-framework scheduler with the library gaps
// filled (scenario.js's header lists them), each scheduler's events in order with their
// arrival times, and exact-value checks reported as one JSON line per step on stdout.
//
// A scenario is `node <scenario>.js <harvest-master> <harvest-agent>`; run(scenario) ends the
// process: 0 after the last step, 1 at the first mismatch with the logs and events kept.


const {spawn} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const Long = require('long');
const mesosFramework = require('mesos-framework');
const schedulerHandlers = require('mesos-framework/lib/schedulerHandlers');

const [masterBinary, agentBinary] = process.argv.slice(2);
if (!masterBinary || !agentBinary) {
  console.error(`usage: node ${path.basename(process.argv[1])} <harvest-master> <harvest-agent>`);
  process.exit(2);
}

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'harvest-mesos-framework-'));
const children = [];
const frameworks = [];
// Milliseconds on a monotonic clock.
const now = () => performance.now();
const startedAt = now();

function report(step, details) {
  console.log(JSON.stringify({step, at_ms: Math.round(now() - startedAt), ...details}));
}

class Mismatch extends Error {}

function expect(what, actual, expected) {
  const a = JSON.stringify(actual);
  const e = JSON.stringify(expected);
  if (a !== e) throw new Mismatch(`${what}: expected ${e}, got ${a}`);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// ---- processes ------------------------------------------------------------------------------

function startProcess(binary, args, logName) {
  const log = fs.openSync(path.join(workDir, logName), 'a');
  const child = spawn(binary, args, {stdio: ['ignore', 'pipe', log]});
  child.stdout.on('data', (chunk) => fs.appendFileSync(path.join(workDir, logName), chunk));
  children.push(child);
  return child;
}

function startMaster() {
  const master = startProcess(
      masterBinary,
      ['--listen=127.0.0.1:0', '--allocation_interval=100ms', '--logtostderr'],
      'master.log',
  );
  return new Promise((resolve, reject) => {
    let seen = '';
    master.stdout.on('data', (chunk) => {
      seen += chunk;
      const listening = /listening on 127\.0\.0\.1:(\d+)/.exec(seen);
      if (listening) resolve(Number(listening[1]));
    });
    master.on('exit', (code) => reject(new Error(`harvest-master exited with ${code}`)));
  });
}

// `flags` are more harvest-agent flags (after the default kill grace, so they may replace it).
function startAgent(port, id, resources, flags = []) {
  const stateFile = path.join(workDir, `${id}.state`);
  startProcess(
      agentBinary,
      [
        `--master=127.0.0.1:${port}`,
        `--id=${id}`,
        `--resources=${resources}`,
        '--kill_grace=100ms',
        `--state_file=${stateFile}`,
        ...flags,
      ],
      `${id}.log`,
  );
  return stateFile;
}

// The port an agent started with --port=0 serves its HTTP endpoint on, from its log.
async function servedPort(id) {
  const log = path.join(workDir, `${id}.log`);
  let port;
  await until(`${id} serves HTTP`, () => {
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    const served = /serving HTTP on 127\.0\.0\.1:(\d+)/.exec(text);
    if (served) port = Number(served[1]);
    return port !== undefined;
  }, 10000);
  return port;
}

// Sends SIGTERM and resolves with the exit code, or the signal that ended the process (at once
// for one that has already ended).
function stop(child, timeoutMs) {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode ?? child.signalCode);
  }
  return new Promise((resolve, reject) => {
    const timer =
        setTimeout(() => reject(new Mismatch(`${child.spawnfile} ignored SIGTERM`)), timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      resolve(code ?? signal);
    });
    child.kill('SIGTERM');
  });
}

// The tasks an agent holds, from its --state_file: {"<task>": "<state>"}.
function agentTasks(stateFile) {
  const tasks = {};
  if (!fs.existsSync(stateFile)) return tasks;
  for (const line of fs.readFileSync(stateFile, 'utf8').split('\n')) {
    const [kind, , task, state] = line.split(' ');
    if (kind === 'task') tasks[task] = state;
  }
  return tasks;
}

function agentRegistered(stateFile) {
  return fs.existsSync(stateFile) && fs.readFileSync(stateFile, 'utf8').startsWith('registered 1');
}

async function until(what, condition, timeoutMs) {
  const deadline = now() + timeoutMs;
  for (;;) {
    if (condition()) return;
    if (now() > deadline) throw new Mismatch(`timed out after ${timeoutMs} ms: ${what}`);
    await sleep(25);
  }
}

// ---- the library, and what each scheduler saw -------------------------------------------------

const mesos = mesosFramework.Mesos.getMesos();

// Library gap: role and capabilities per framework name, added to the FrameworkInfo the
// library builds for SUBSCRIBE.
const frameworkExtras = {};
const LibraryFrameworkInfo = mesos.FrameworkInfo;
mesos.FrameworkInfo = function withFrameworkExtras(...args) {
  const info = new LibraryFrameworkInfo(...args);
  const extras = frameworkExtras[args[1]];
  if (extras) {
    info.set('role', extras.role);
    info.set('capabilities', extras.capabilities);
    // Mesos 1.9's field, not in the library's 0.28 schema: a plain property is serialized too.
    if (extras.offerFilters) info.offer_filters = extras.offerFilters;
  }
  return info;
};

// Library gap: Mesos 1.11's Subscribe.offer_constraints, added the same way.
const LibrarySubscribe = mesos.scheduler.Call.Subscribe;
mesos.scheduler.Call.Subscribe = function withOfferConstraints(info, ...rest) {
  const subscribe = new LibrarySubscribe(info, ...rest);
  const extras = frameworkExtras[info.name];
  if (extras && extras.offerConstraints) subscribe.offer_constraints = extras.offerConstraints;
  return subscribe;
};

// Library gap: its protobuf messages hold int64 fields (a KillPolicy's nanoseconds) as Long
// objects, which JSON.stringify writes as {low, high, unsigned}; proto3's JSON form is the
// decimal string, which Mesos and Harvest both read.
Long.prototype.toJSON = function int64AsJson() {
  return this.toString();
};

// What the library reports when the master ends a subscription's stream.
const STREAM_CLOSED = 'Long-running connection was closed!';

// A scheduler of the library and the events it received, in order, with their arrival times.
class Framework {
  constructor(port, name, options) {
    frameworkExtras[name] = {
      role: options.role,
      capabilities: options.revocable ? [{type: 'REVOCABLE_RESOURCES'}] : [],
      offerFilters: options.offerFilters,
      offerConstraints: options.offerConstraints,
    };
    this.name = name;
    frameworks.push(this);
    this.events = [];
    this.acknowledgements = 0;
    this.errors = [];
    this.offers = new Map();  // Outstanding offers by id.
    const self = this;
    const record = (type) => function(body) { self.events.push({type, body, at: now()}); };
    this.scheduler = new mesosFramework.Scheduler({
      masterUrl: '127.0.0.1',
      port,
      frameworkName: name,
      user: 'harvest-test',
      frameworkFailoverTimeout: options.failoverTimeout,
      // Longer than the master's 15 s heartbeat: the library's default (10 s) would take a
      // quiet stream for a dead master.
      masterConnectionTimeout: 60,
      ...(options.tasks ? {tasks: options.tasks} : {}),
      logging: {path: workDir, fileName: `${name}.log`, level: 'error'},
      handlers: {
        SUBSCRIBED: record('SUBSCRIBED'),
        // Offers are answered by the steps below, not by the library's matcher.
        OFFERS: function(offers) {
          for (const offer of offers.offers) self.offers.set(offer.id.value, offer);
          record('OFFERS').call(this, offers);
        },
        RESCIND: function(rescind) {
          self.offers.delete(rescind.offer_id.value);
          record('RESCIND').call(this, rescind);
        },
        // The library's own handler acknowledges every update that carries a uuid.
        UPDATE: function(update) {
          record('UPDATE').call(this, update);
          schedulerHandlers.UPDATE.call(this, update);
        },
        ERROR: record('ERROR'),
      },
    });
    if (options.frameworkId) this.scheduler.frameworkId = options.frameworkId;
    this.scheduler.on('sent_acknowledge', () => this.acknowledgements++);
    this.scheduler.on('error', (error) => this.errors.push(String(error.message || error)));
  }

  async subscribe() {
    await new Promise((resolve) => this.scheduler.once('ready', resolve));
    this.scheduler.subscribe();
  }

  // The first event of `type` at or after `since` that `match`es, waiting up to `timeoutMs`.
  async next(type, match, since, timeoutMs, what) {
    const found = () => this.events.find((e) => e.type === type && e.at >= since && match(e.body));
    await until(`${this.name}: ${what}`, () => found() !== undefined, timeoutMs);
    return found();
  }

  eventsOf(type, from, to = Infinity) {
    return this.events.filter((e) => e.type === type && e.at >= from && e.at < to);
  }

  offerOn(agent, summary) {
    for (const offer of this.offers.values()) {
      if (offer.agent_id.value === agent && describe(offer.resources) === summary) return offer;
    }
    return undefined;
  }

  // When `offer` arrived.
  arrival(offer) {
    return this.events
        .find(
            (e) => e.type === 'OFFERS' && e.body.offers.some((o) => o.id.value === offer.id.value))
        .at;
  }

  // An outstanding offer on `agent` of exactly `summary` (see describe), waiting up to timeoutMs.
  async offered(agent, summary, timeoutMs) {
    await until(
        `${this.name}: an offer of ${summary} on ${agent}`,
        () => this.offerOn(agent, summary) !== undefined,
        timeoutMs,
    );
    return this.offerOn(agent, summary);
  }

  // Calls through the library resolve on its "sent_<call>" event (the master answered 202)
  // and fail on its "error" event; the end of the event stream (expected after TEARDOWN) is not
  // an answer to the call.
  call(sent, invoke) {
    return new Promise((resolve, reject) => {
      const onError = (error) => {
        if (error.message === STREAM_CLOSED) {
          this.scheduler.once('error', onError);
          return;
        }
        this.scheduler.removeListener(sent, onSent);
        reject(new Mismatch(`${this.name}: ${sent}: ${error.message || error}`));
      };
      const onSent = () => {
        this.scheduler.removeListener('error', onError);
        resolve();
      };
      this.scheduler.once(sent, onSent);
      this.scheduler.once('error', onError);
      invoke(this.scheduler);
    });
  }

  decline(offers, refuseSeconds) {
    for (const offer of offers) this.offers.delete(offer.id.value);
    return this.call(
        'sent_decline',
        (s) => s.decline(
            offers.map((o) => o.id),
            {refuse_seconds: refuseSeconds},
            ),
    );
  }

  // Each task: {id, resources, and optionally command (a shell command; default `sleep 3600`)
  // and killGraceSeconds (its KillPolicy)}.
  launch(offer, tasks) {
    this.offers.delete(offer.id.value);
    const taskInfos = tasks.map((task) => ({
                                  name: task.id,
                                  task_id: {value: task.id},
                                  agent_id: offer.agent_id,
                                  resources: task.resources,
                                  command: {shell: true, value: task.command || 'sleep 3600'},
                                  ...(task.killGraceSeconds === undefined ? {} : {
                                    kill_policy: {
                                      grace_period: {nanoseconds: task.killGraceSeconds * 1e9},
                                    },
                                  }),
                                }));
    return this.call(
        'sent_accept',
        (s) => s.accept([offer.id], [{type: 'LAUNCH', launch: {task_infos: taskInfos}}], {
          refuse_seconds: 0,
        }),
    );
  }

  // Library gap: there is no suppress(); SUPPRESS goes through the request helper the library
  // sends its other calls with.
  suppress() {
    return this.call(
        'sent_suppress',
        (s) => mesosFramework.helpers.doRequest.call(
            s, {framework_id: {value: s.frameworkId}, type: 'SUPPRESS'},
            (error) => s.emit(error ? 'error' : 'sent_suppress', error || undefined)));
  }

  // The scheduler process dies: its stream closes and nothing of it subscribes again.
  retire() {
    this.scheduler.subscribe = () => {};
    if (this.scheduler.httpRequest && this.scheduler.httpRequest.destroy) {
      this.scheduler.httpRequest.destroy();
    }
  }

  // Every update that carried a uuid was acknowledged and accepted (202) by the master.
  async allAcknowledged() {
    const withUuid = this.eventsOf('UPDATE', 0).filter((e) => e.body.status.uuid).length;
    await until(
        `${this.name}: ${withUuid} acknowledgements accepted`,
        () => this.acknowledgements >= withUuid,
        2000,
    );
    expect(`${this.name}: acknowledgements accepted`, this.acknowledgements, withUuid);
    return withUuid;
  }
}

// Resources as "name(role){REV}:amount" sorted and joined with ';' (role only when reserved).
function describe(resources) {
  return resources
      .map((r) => {
        const role = r.role && r.role !== '*' ? `(${r.role})` : '';
        return `${r.name}${role}${r.revocable ? '{REV}' : ''}:${r.scalar.value}`;
      })
      .sort()
      .join(';');
}

// Part of an offer's resources for a launch, without allocation_info (see the header).
function take(offer, amounts) {
  return offer.resources.filter((r) => amounts[r.name] !== undefined).map((r) => {
    const resource = {name: r.name, type: r.type, scalar: {value: amounts[r.name]}};
    if (r.role) resource.role = r.role;
    if (r.reservation) resource.reservation = r.reservation;
    if (r.revocable) resource.revocable = {};
    return resource;
  });
}

function statusOf(update) {
  const s = update.status;
  return {
    task: s.task_id.value,
    state: s.state,
    reason: s.reason,
    agent: s.agent_id ? s.agent_id.value : undefined,
    uuid: Boolean(s.uuid),
  };
}

// ---- the scenario -------------------------------------------------------------------------------


// What a scenario removes at the end, pass or fail, after the processes are gone.
const cleanUps = [];
function onCleanUp(fn) { cleanUps.push(fn); }

// Processes still running get SIGTERM and up to 5 s to end (an agent then kills its tasks and
// removes its cgroups), then SIGKILL; then the scenario's own clean-ups run.
async function cleanUp() {
  const running = children.filter((c) => c.exitCode === null && c.signalCode === null);
  await Promise.all(running.map((child) => stop(child, 5000).catch(() => child.kill('SIGKILL'))));
  for (const fn of cleanUps) fn();
}

// Runs `scenario` (an async function), reports its end, and exits 0, or 1 on its first mismatch
// with the logs and each scheduler's events kept.
function run(scenario) {
  scenario()
      .then(async () => {
        report('done', {seconds: Math.round(now() - startedAt) / 1000});
        await cleanUp();
        fs.rmSync(workDir, {recursive: true, force: true});
        process.exit(0);
      })
      .catch(async (error) => {
        report('FAILED', {error: error.message});
        console.error(error.stack);
        for (const [i, framework] of frameworks.entries()) {
          const lines = framework.events.map(
              (e) => JSON.stringify({at_ms: Math.round(e.at - startedAt), ...e}));
          fs.writeFileSync(
              path.join(workDir, `events-${i}-${framework.name}.jsonl`), lines.join('\n'));
        }
        console.error(`logs and the events each scheduler received kept in ${workDir}:`);
        const masterLog = path.join(workDir, 'master.log');
        if (fs.existsSync(masterLog)) {
          console.error(fs.readFileSync(masterLog, 'utf8').split('\n').slice(-40).join('\n'));
        }
        await cleanUp();
        process.exit(1);
      });
}

module.exports = {
  STREAM_CLOSED,
  Framework,
  Mismatch,
  agentRegistered,
  agentTasks,
  children,
  describe,
  expect,
  frameworkExtras,
  frameworks,
  mesos,
  now,
  onCleanUp,
  report,
  run,
  servedPort,
  sleep,
  startAgent,
  startMaster,
  statusOf,
  stop,
  take,
  until,
  workDir,
};
