'use strict';
// A third-party Mesos v1 HTTP scheduler library against harvest-master --listen: npm's
// mesos-framework (pinned in package-lock.json) drives a master and two harvest-agent processes on
// loopback through subscribe, offers (regular and revocable), launch, updates and their
// acknowledgements, decline filters, suppress/revive, reconciliation, kill, rescind, eviction,
// failover within and past failover_timeout, teardown, and clean exits. Each step is checked
// against exact expected values and reported as one JSON line on stdout; the first mismatch
// exits 1 and keeps the logs and the events each scheduler received.
//
// Usage: node scenario.js <harvest-master> <harvest-agent>
//
// Where mesos-framework 0.5.3 cannot express a step, the step uses the library's own plumbing
// and says so at the place ("library gap"):
// * Scheduler options have no role and no capabilities (it subscribes with both null), so
//   FrameworkInfo is extended as the library builds it (withFrameworkExtras below).
// * There is no suppress(): SUPPRESS goes through the library's helpers.doRequest, which sends
//   every other call with the Mesos-Stream-Id.
// * Its offer matcher asks for unreserved, non-revocable cpus and mem only, so revocable and
//   reserved launches are built here and sent with the library's accept().
// * Its offer matcher skips every other pending task of an offer (it splices the list it
//   iterates), so the two `web` instances are matched against two offers, one each.
// * Its protobuf schema is Mesos 0.28's, which has no allocation_info: resources taken from an
//   offer are passed back without it.
// * Its failover_timeout option cannot be 0 (`|| 604800`), so the owner keeps the default.
// * A scheduler whose stream ends subscribes again on its own; a scheduler that is meant to be
//   dead (failover, teardown) has that disabled (retire below), as its process would be gone.

const {spawn} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

const mesosFramework = require('mesos-framework');
const schedulerHandlers = require('mesos-framework/lib/schedulerHandlers');

const [masterBinary, agentBinary] = process.argv.slice(2);
if (!masterBinary || !agentBinary) {
  console.error('usage: node scenario.js <harvest-master> <harvest-agent>');
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

function startAgent(port, id, resources) {
  const stateFile = path.join(workDir, `${id}.state`);
  startProcess(
      agentBinary,
      [
        `--master=127.0.0.1:${port}`,
        `--id=${id}`,
        `--resources=${resources}`,
        '--kill_grace=100ms',
        `--state_file=${stateFile}`,
      ],
      `${id}.log`,
  );
  return stateFile;
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
  }
  return info;
};

// What the library reports when the master ends a subscription's stream.
const STREAM_CLOSED = 'Long-running connection was closed!';

// A scheduler of the library and the events it received, in order, with their arrival times.
class Framework {
  constructor(port, name, options) {
    frameworkExtras[name] = {
      role: options.role,
      capabilities: options.revocable ? [{type: 'REVOCABLE_RESOURCES'}] : [],
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

  launch(offer, tasks) {
    this.offers.delete(offer.id.value);
    const taskInfos = tasks.map((task) => ({
                                  name: task.id,
                                  task_id: {value: task.id},
                                  agent_id: offer.agent_id,
                                  resources: task.resources,
                                  command: {shell: true, value: 'sleep 3600'},
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

async function scenario() {
  const port = await startMaster();
  const a1 = startAgent(port, 'a1', 'cpus:4;mem:4096');
  // Half of a2 is reserved to `analytics` and idle: lent to `batch` as revocable.
  const a2 = startAgent(port, 'a2', 'cpus:1;mem:1024;cpus(analytics):2;mem(analytics):2048');
  await until('both agents registered', () => agentRegistered(a1) && agentRegistered(a2), 10000);
  report('processes', {master_port: port, agents: ['a1', 'a2']});

  // Subscribe: role batch, REVOCABLE_RESOURCES, failover_timeout 2 s; the library launches two
  // instances of `web` with its own offer matcher.
  const failoverSeconds = 2;
  const webTask = {
    instances: 2,
    priority: 1,
    resources: {cpus: 0.5, mem: 128, disk: 0, ports: 0},
    commandInfo: new mesos.CommandInfo({shell: true, value: 'sleep 3600'}),
  };
  const batchOptions = {role: 'batch', revocable: true, failoverTimeout: failoverSeconds};
  let batch = new Framework(port, 'batch', {...batchOptions, tasks: {web: webTask}});
  const firstBatch = batch;
  let t = now();
  await batch.subscribe();
  const subscribed = (await batch.next('SUBSCRIBED', () => true, t, 5000, 'SUBSCRIBED')).body;
  const frameworkId = subscribed.framework_id.value;
  expect('library\'s framework id', batch.scheduler.frameworkId, frameworkId);
  expect('heartbeat interval', subscribed.heartbeat_interval_seconds, 15);
  expect('master_info address', subscribed.master_info.address, {
    hostname: subscribed.master_info.hostname,
    ip: '127.0.0.1',
    port,
  });
  report('subscribe', {framework_id: frameworkId, stream_id: batch.scheduler.mesosStreamId});

  // Offers: each agent's unreserved resources, and a2's idle reservation as revocable in an
  // offer of its own; every offer with the agent's url.
  const a1Offer = await batch.offered('a1', 'cpus:4;mem:4096', 5000);
  const a2Offer = await batch.offered('a2', 'cpus:1;mem:1024', 5000);
  const lentOffer = await batch.offered('a2', 'cpus{REV}:2;mem{REV}:2048', 5000);
  expect('outstanding offers', batch.offers.size, 3);
  for (const offer of [a1Offer, a2Offer, lentOffer]) {
    expect('offer url', offer.url, {
      scheme: 'http',
      address: {hostname: offer.agent_id.value, ip: '127.0.0.1', port: 5051},
      path: '/slave(1)',
    });
  }
  report('offers', {regular: 2, revocable: 1});

  // Decline with filters: no offer of a1 for refuse_seconds, then a1 comes back.
  t = now();
  await batch.decline([a1Offer], 2);
  const again = await batch.offered('a1', 'cpus:4;mem:4096', 4000);
  const reofferedAfterMs = batch.arrival(again) - t;
  expect('a1 offered again after its 2 s filter', reofferedAfterMs >= 2000, true);
  expect('a1 offered again within two seconds of its filter', reofferedAfterMs < 4000, true);
  expect(
      'offers of a1 inside the filter (ms after the decline)',
      batch.eventsOf('OFFERS', t, t + 2000)
          .filter((e) => e.body.offers.some((o) => o.agent_id.value === 'a1'))
          .map((e) => e.at - t),
      [],
  );
  report(
      'decline_with_filters',
      {refuse_seconds: 2, reoffered_after_ms: Math.round(reofferedAfterMs)});

  // Launch through the library's own offer matcher (which reads offer.url): `web` instance 1
  // on a1, 2 on a2; the agents' TASK_RUNNING updates carry uuids the library acknowledges.
  t = now();
  const libraryAccept = t;
  batch.offers.delete(again.id.value);
  batch.offers.delete(a2Offer.id.value);
  schedulerHandlers.OFFERS.call(batch.scheduler, {offers: [again, a2Offer]});
  const launched = batch.scheduler.launchedTasks;
  expect('tasks the library launched', launched.map((task) => task.name), ['web-1', 'web-2']);
  const webIds = launched.map((task) => task.taskId);
  const webAgents = ['a1', 'a2'];
  for (const [i, id] of webIds.entries()) {
    const update = await batch.next('UPDATE', (u) => u.status.task_id.value === id, t, 5000, id);
    expect(`update of ${id}`, statusOf(update.body), {
      task: id,
      state: 'TASK_RUNNING',
      reason: undefined,
      agent: webAgents[i],
      uuid: true,
    });
  }
  expect(
      'the library\'s view of its tasks',
      launched.map((task) => [task.runtimeInfo.agentId, task.runtimeInfo.state]),
      [
        ['a1', 'TASK_RUNNING'],
        ['a2', 'TASK_RUNNING'],
      ],
  );
  await until(
      'the agents run the web tasks',
      () => webIds[0] in agentTasks(a1) && webIds[1] in agentTasks(a2),
      3000,
  );
  expect('a1\'s tasks', agentTasks(a1), {[webIds[0]]: 'TASK_RUNNING'});
  expect('a2\'s tasks', agentTasks(a2), {[webIds[1]]: 'TASK_RUNNING'});
  report('launch', {tasks: webIds, acknowledged: await batch.allAcknowledged()});

  // A revocable task on the lent reservation.
  t = now();
  await batch.launch(lentOffer, [{id: 'rev-1', resources: take(lentOffer, {cpus: 1, mem: 512})}]);
  const revRunning =
      await batch.next('UPDATE', (u) => u.status.task_id.value === 'rev-1', t, 5000, 'rev-1');
  expect('update of rev-1', statusOf(revRunning.body), {
    task: 'rev-1',
    state: 'TASK_RUNNING',
    reason: undefined,
    agent: 'a2',
    uuid: true,
  });
  // What the launch left of the offer comes back at once (refuse_seconds 0).
  await batch.offered('a2', 'cpus{REV}:1;mem{REV}:1536', 3000);
  report('launch_revocable', {task: 'rev-1', acknowledged: await batch.allAcknowledged()});

  // Suppress, then decline everything without a filter: no offers while suppressed. Revive:
  // offers at once, a1's too, before the default 5 s filter the library's accept left on it
  // would have expired (revive clears filters).
  await batch.suppress();
  t = now();
  await batch.decline([...batch.offers.values()], 0);
  await sleep(1500);
  expect('offers while suppressed', batch.eventsOf('OFFERS', t).length, 0);
  t = now();
  await batch.call('sent_revive', (s) => s.revive());
  const a1Revived = await batch.offered('a1', 'cpus:3.5;mem:3968', 3000);
  expect(
      'a1 offered before the library\'s filter expired',
      batch.arrival(a1Revived) < libraryAccept + 5000, true);
  await batch.offered('a2', 'cpus:0.5;mem:896', 3000);
  const lentRest = await batch.offered('a2', 'cpus{REV}:1;mem{REV}:1536', 3000);
  report('suppress_revive', {quiet_ms: 1500, revived_offers: batch.offers.size});

  // Reconcile: explicit (a known task, an unknown one) and implicit; master-generated updates
  // carry no uuid, so the library acknowledges none of them.
  t = now();
  await batch.call('sent_reconcile', (s) => s.reconcile(webIds[0], 'a1'));
  const known =
      await batch.next('UPDATE', (u) => u.status.task_id.value === webIds[0], t, 3000, 'reconcile');
  expect('explicit reconciliation', statusOf(known.body), {
    task: webIds[0],
    state: 'TASK_RUNNING',
    reason: 'REASON_RECONCILIATION',
    agent: 'a1',
    uuid: false,
  });
  t = now();
  await batch.call('sent_reconcile', (s) => s.reconcile('no-such-task', 'a1'));
  const unknown = await batch.next(
      'UPDATE', (u) => u.status.task_id.value === 'no-such-task', t, 3000, 'reconcile');
  expect(
      'reconciliation of an unknown task', [unknown.body.status.state, unknown.body.status.reason],
      [
        'TASK_LOST',
        'REASON_RECONCILIATION',
      ]);
  t = now();
  await batch.call('sent_reconcile', (s) => s.reconcile());
  await until(
      'implicit reconciliation of 3 tasks', () => batch.eventsOf('UPDATE', t).length >= 3, 3000);
  await sleep(200);
  expect(
      'implicit reconciliation',
      batch.eventsOf('UPDATE', t)
          .map((e) => [e.body.status.task_id.value, e.body.status.state, e.body.status.reason])
          .sort(),
      [...webIds, 'rev-1'].map((id) => [id, 'TASK_RUNNING', 'REASON_RECONCILIATION']).sort(),
  );
  report('reconcile', {explicit: 2, implicit: 3, acknowledged: await batch.allAcknowledged()});

  // The reservation's owner subscribes: batch's outstanding lent offer is rescinded; the owner
  // is offered its whole reservation, launches on it and needs no more offers; a2 evicts rev-1.
  t = now();
  const analytics = new Framework(port, 'analytics', {role: 'analytics', revocable: false});
  await analytics.subscribe();
  const rescind = await batch.next('RESCIND', () => true, t, 5000, 'RESCIND');
  expect('rescinded offer', rescind.body.offer_id.value, lentRest.id.value);
  const reserved = await analytics.offered('a2', 'cpus(analytics):2;mem(analytics):2048', 5000);
  await analytics.launch(reserved, [
    {id: 'owner-1', resources: take(reserved, {cpus: 2, mem: 2048})},
  ]);
  await analytics.suppress();
  const evicted =
      await batch.next('UPDATE', (u) => u.status.task_id.value === 'rev-1', t, 5000, 'eviction');
  expect('eviction of rev-1', statusOf(evicted.body), {
    task: 'rev-1',
    state: 'TASK_LOST',
    reason: 'REASON_CONTAINER_PREEMPTED',
    agent: 'a2',
    uuid: true,
  });
  const owner = await analytics.next(
      'UPDATE', (u) => u.status.task_id.value === 'owner-1', t, 5000, 'owner-1');
  expect('update of owner-1', statusOf(owner.body), {
    task: 'owner-1',
    state: 'TASK_RUNNING',
    reason: undefined,
    agent: 'a2',
    uuid: true,
  });
  await until('a2 no longer runs rev-1', () => !('rev-1' in agentTasks(a2)), 3000);
  expect('rescinds', batch.eventsOf('RESCIND', t).length, 1);
  expect('a2\'s tasks', agentTasks(a2), {[webIds[1]]: 'TASK_RUNNING', 'owner-1': 'TASK_RUNNING'});
  report('rescind_and_eviction', {
    rescinded: rescind.body.offer_id.value,
    evicted: 'rev-1',
    acknowledged: (await batch.allAcknowledged()) + (await analytics.allAcknowledged()),
  });

  // Kill: a known task ends TASK_KILLED (acknowledged, gone from its agent); an unknown one is
  // answered TASK_LOST.
  t = now();
  await batch.call('sent_kill', (s) => s.kill(webIds[0], 'a1'));
  const killed =
      await batch.next('UPDATE', (u) => u.status.task_id.value === webIds[0], t, 5000, 'kill');
  expect(
      'kill', [killed.body.status.state, Boolean(killed.body.status.uuid)], ['TASK_KILLED', true]);
  await batch.call('sent_kill', (s) => s.kill('no-such-task', 'a1'));
  const lost =
      await batch.next('UPDATE', (u) => u.status.task_id.value === 'no-such-task', t, 3000, 'kill');
  expect('kill of an unknown task', [lost.body.status.state, Boolean(lost.body.status.uuid)], [
    'TASK_LOST',
    false,
  ]);
  await until(`a1 no longer runs ${webIds[0]}`, () => !(webIds[0] in agentTasks(a1)), 3000);
  report('kill', {killed: webIds[0], acknowledged: await batch.allAcknowledged()});

  // Failover within failover_timeout: the scheduler, suppressed as it needs nothing more, dies;
  // a new one subscribes with the same framework id and no suppressed_roles, so (as in Mesos)
  // it is offered again what the old one held unanswered. Past the timeout its task still runs.
  const survivor = webIds[1];
  await batch.suppress();
  let disconnected = now();
  batch.retire();
  await sleep(500);
  batch = new Framework(port, 'batch', {...batchOptions, frameworkId});
  t = now();
  await batch.subscribe();
  const resubscribed = await batch.next('SUBSCRIBED', () => true, t, 3000, 'SUBSCRIBED');
  expect('framework id after failover', resubscribed.body.framework_id.value, frameworkId);
  await batch.offered('a1', 'cpus:4;mem:4096', 3000);
  await batch.offered('a2', 'cpus:0.5;mem:896', 3000);
  await sleep(disconnected + failoverSeconds * 1000 + 500 - now());
  t = now();
  await batch.call('sent_reconcile', (s) => s.reconcile(survivor, 'a2'));
  const stillRunning =
      await batch.next('UPDATE', (u) => u.status.task_id.value === survivor, t, 3000, 'reconcile');
  expect('task after failover', stillRunning.body.status.state, 'TASK_RUNNING');
  expect(
      'a2\'s tasks after failover', agentTasks(a2),
      {[survivor]: 'TASK_RUNNING', 'owner-1': 'TASK_RUNNING'});
  report('failover_within_timeout', {framework_id: frameworkId, kept: survivor});

  // The acknowledgements held: the master sends an update again 10 s after it went out
  // unacknowledged (to the framework's scheduler of the moment), and the survivor's TASK_RUNNING
  // is 11 s old now with the survivor still running; no uuid arrived twice at any scheduler.
  const survivorRunning =
      firstBatch.events.find((e) => e.type === 'UPDATE' && e.body.status.task_id.value === survivor)
          .at;
  await sleep(survivorRunning + 11000 - now());
  for (const name of ['batch', 'analytics']) {
    const uuids = frameworks.filter((f) => f.name === name)
                      .flatMap((f) => f.eventsOf('UPDATE', 0))
                      .map((e) => e.body.status.uuid)
                      .filter(Boolean);
    expect(`${name}: updates sent again`, uuids.length - new Set(uuids).size, 0);
  }
  expect('a2\'s tasks', agentTasks(a2), {[survivor]: 'TASK_RUNNING', 'owner-1': 'TASK_RUNNING'});
  report('no_retries', {survivor_update_age_ms: Math.round(now() - survivorRunning)});

  // Failover past failover_timeout: the framework is removed and its task killed; its id is
  // refused from then on.
  disconnected = now();
  batch.retire();
  await sleep(failoverSeconds * 1000 - 500);
  expect(
      'a2\'s tasks before the timeout', agentTasks(a2),
      {[survivor]: 'TASK_RUNNING', 'owner-1': 'TASK_RUNNING'});
  await until(`a2 no longer runs ${survivor}`, () => !(survivor in agentTasks(a2)), 3000);
  const removedAfterMs = now() - disconnected;
  const late = new Framework(port, 'batch', {...batchOptions, frameworkId});
  t = now();
  await late.subscribe();
  const refused = await late.next('ERROR', () => true, t, 3000, 'ERROR');
  late.retire();
  expect('late re-subscription', refused.body.message, `framework ${frameworkId} has been removed`);
  expect('SUBSCRIBED after removal', late.eventsOf('SUBSCRIBED', 0).length, 0);
  report(
      'failover_past_timeout',
      {task_killed_after_ms: Math.round(removedAfterMs), error: refused.body.message});

  // Teardown: the owner's framework goes with its task, and its id is refused too.
  const analyticsId = analytics.scheduler.frameworkId;
  // The master ends the stream of a torn-down framework; the library would subscribe again.
  analytics.scheduler.subscribe = () => {};
  await analytics.call('sent_teardown', (s) => s.teardown());
  await until('a2 no longer runs owner-1', () => !('owner-1' in agentTasks(a2)), 3000);
  const after = new Framework(port, 'analytics', {role: 'analytics', frameworkId: analyticsId});
  t = now();
  await after.subscribe();
  const gone = await after.next('ERROR', () => true, t, 3000, 'ERROR');
  after.retire();
  analytics.retire();
  expect(
      'subscription after teardown', gone.body.message,
      `framework ${analyticsId} has been removed`);
  report('teardown', {framework_id: analyticsId});

  // What the library itself reported as errors (a call answered other than 202, an event it
  // could not parse, its stream ending): only the end of the stream TEARDOWN closes.
  expect('errors the library reported', frameworks.slice(0, 3).map((f) => [f.name, f.errors]), [
    ['batch', []],
    ['analytics', [STREAM_CLOSED]],
    ['batch', []],
  ]);

  // The master and the agents end cleanly (under the sanitizers, leaks are reported here).
  const codes = await Promise.all(children.map((child) => stop(child, 20000)));
  expect('exit codes after SIGTERM', codes, [0, 0, 0]);
  report('shutdown', {exit_codes: codes});
}

function cleanUp() {
  for (const child of children) child.kill('SIGKILL');
}

scenario()
    .then(() => {
      report('done', {seconds: Math.round(now() - startedAt) / 1000});
      cleanUp();
      fs.rmSync(workDir, {recursive: true, force: true});
      process.exit(0);
    })
    .catch((error) => {
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
      cleanUp();
      process.exit(1);
    });
