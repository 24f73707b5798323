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
//   FrameworkInfo is extended as the library builds it (withFrameworkExtras in harness.js).
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
//   dead (failover, teardown) has that disabled (Framework.retire in harness.js), as its process
//   would be gone.
const {
  STREAM_CLOSED,
  Framework,
  agentRegistered,
  agentTasks,
  children,
  describe,
  expect,
  frameworks,
  mesos,
  now,
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
} = require('./harness');
const schedulerHandlers = require('mesos-framework/lib/schedulerHandlers');

async function scenario() {
  const port = await startMaster();
  const a1 = startAgent(port, 'a1', 'cpus:4;mem:4096', ['--port=0']);
  // Half of a2 is reserved to `analytics` and idle: lent to `batch` as revocable.
  const a2 =
      startAgent(port, 'a2', 'cpus:1;mem:1024;cpus(analytics):2;mem(analytics):2048', ['--port=0']);
  const agentPorts = {a1: await servedPort('a1'), a2: await servedPort('a2')};
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
  // offer of its own; every offer with the url of the agent's endpoint (the port it serves).
  const a1Offer = await batch.offered('a1', 'cpus:4;mem:4096', 5000);
  const a2Offer = await batch.offered('a2', 'cpus:1;mem:1024', 5000);
  const lentOffer = await batch.offered('a2', 'cpus{REV}:2;mem{REV}:2048', 5000);
  expect('outstanding offers', batch.offers.size, 3);
  for (const offer of [a1Offer, a2Offer, lentOffer]) {
    expect('offer url', offer.url, {
      scheme: 'http',
      address: {
        hostname: offer.agent_id.value,
        ip: '127.0.0.1',
        port: agentPorts[offer.agent_id.value],
      },
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
run(scenario);
