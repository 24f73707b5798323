'use strict';
// npm's mesos-framework against harvest-master --listen and two harvest-agent processes that
// run their tasks as real processes (--tasks=processes; cgroups as root, process groups
// otherwise), on loopback:
//   * offers name each agent's real endpoint, which serves /state;
//   * offer constraints (Mesos 1.11) keep a framework's offers on the agents it asked for, and
//     offer filters (Mesos 1.9) keep agents with less than its minimum away from it;
//   * the seed's eviction on processes: a revocable task that ignores SIGTERM (and whose
//     KillPolicy allows a minute) is evicted when the reservation's owner launches; the owner's
//     process starts only once the revocable process is gone (the owner's command checks the
//     victim's pid itself), after --revocable_kill_grace, and says so in its stdout, read back
//     through the agent's files API;
//   * nothing is left: every pid a task wrote is gone and the agents' cgroups are removed.
// Library gaps are handled as in scenario.js (see its header and harness.js).
//
// Usage: node real_tasks.js <harvest-master> <harvest-agent>

const fs = require('fs');
const http = require('http');
const path = require('path');

const {
  Framework,
  agentRegistered,
  children,
  expect,
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
} = require('./harness');

// GET on an agent's endpoint: {status, body}.
function get(port, pathAndQuery) {
  return new Promise((resolve, reject) => {
    const request = http.get({host: '127.0.0.1', port, path: pathAndQuery}, (response) => {
      let body = '';
      response.on('data', (chunk) => (body += chunk));
      response.on('end', () => resolve({status: response.statusCode, body}));
    });
    request.on('error', reject);
    request.setTimeout(5000, () => request.destroy(new Error(`GET ${pathAndQuery} timed out`)));
  });
}

// Whether process `pid` exists; a pid that is not positive is an error (kill(0, 0) would ask
// about our own process group).
function alive(pid) {
  if (!(pid > 0)) throw new Error(`not a pid: ${pid}`);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    if (error.code === 'ESRCH') return false;
    throw error;
  }
}

function readPid(file) {
  return fs.existsSync(file) ? Number(fs.readFileSync(file, 'utf8').trim()) || 0 : 0;
}

// The agents' cgroups root under this process's own cpu cgroup (where the agents, our children,
// make theirs), when cgroup v1's cpu hierarchy is mounted.
function cgroupsRootPath(root) {
  const line = fs.readFileSync('/proc/self/cgroup', 'utf8')
                   .split('\n')
                   .find((l) => /^\d+:[^:]*\bcpu\b[^:]*:/.test(l));
  if (!line) return undefined;
  const own = line.split(':')[2];
  const mount = fs.readdirSync('/sys/fs/cgroup')
                    .map((name) => path.join('/sys/fs/cgroup', name))
                    .find((p) => /(^|,)cpu(,|$)/.test(path.basename(p)));
  return mount ? path.join(mount, own, root) : undefined;
}

const flagsOf = (id, cgroupsRoot) =>
    ['--tasks=processes',
     `--work_dir=${path.join(workDir, id)}`,
     `--cgroups_root=${cgroupsRoot}`,
     '--port=0',
     '--revocable_kill_grace=500ms',
];

async function scenario() {
  // Named for this run (the test suite's cleanup checks look for harvest-test-*).
  const cgroupsRoot = `harvest-test-npm-${process.pid}`;
  // After a failure the agents may have been killed before removing their cgroups: what is left
  // under this run's root (empty once its processes are gone) is removed.
  onCleanUp(() => {
    const root = cgroupsRootPath(cgroupsRoot);
    if (root && fs.existsSync(root)) removeCgroupTree(root);
  });
  const port = await startMaster();
  // a1: one unreserved cpu, and a reservation of `owner`'s lent while idle; a2: four cpus.
  const a1 = startAgent(
      port, 'a1', 'cpus:1;mem:256;cpus(owner):2;mem(owner):256',
      [...flagsOf('a1', cgroupsRoot), '--attributes=rack:r1']);
  const a2 = startAgent(
      port, 'a2', 'cpus:4;mem:512', [...flagsOf('a2', cgroupsRoot), '--attributes=rack:r2']);
  const ports = {a1: await servedPort('a1'), a2: await servedPort('a2')};
  await until('both agents registered', () => agentRegistered(a1) && agentRegistered(a2), 10000);
  const cgroups =
      fs.readFileSync(path.join(workDir, 'a1.log'), 'utf8').includes('isolates tasks with cgroups');
  report('processes', {master_port: port, agent_ports: ports, cgroups});

  // Offer constraints: `placed` wants rack r2 only. It is offered a2, whose url names a2's
  // endpoint, and nothing of a1 while it holds a2's offer.
  let t = now();
  const placed = new Framework(port, 'placed', {
    role: 'web',
    revocable: false,
    offerConstraints: {
      role_constraints: {
        web: {
          groups: [{
            attribute_constraints:
                [{selector: {attribute_name: 'rack'}, predicate: {text_equals: {value: 'r2'}}}],
          }],
        },
      },
    },
  });
  await placed.subscribe();
  const onR2 = await placed.offered('a2', 'cpus:4;mem:512', 5000);
  expect('a2\'s url', onR2.url.address, {hostname: 'a2', ip: '127.0.0.1', port: ports.a2});
  const state = await get(ports.a2, '/state');
  expect('a2\'s /state answers as a2', [state.status, JSON.parse(state.body).id], [200, 'a2']);
  await sleep(1500);
  const offeredAgents = (f, from) =>
      [...new Set(
           f.eventsOf('OFFERS', from).flatMap((e) => e.body.offers.map((o) => o.agent_id.value))),
  ];
  expect('agents offered to the r2-constrained framework', offeredAgents(placed, t), ['a2']);
  await placed.decline([onR2], 3600);
  await placed.suppress();
  report('offer_constraints', {offered: offeredAgents(placed, t)});

  // Offer filters: `big` can use nothing under 2 cpus, so a1's one cpu is never offered to it.
  t = now();
  const big = new Framework(port, 'big', {
    role: 'big',
    revocable: false,
    offerFilters:
        {big: {min_allocatable_resources: {quantities: [{quantities: {cpus: {value: 2}}}]}}},
  });
  await big.subscribe();
  const bigOffer = await big.offered('a2', 'cpus:4;mem:512', 5000);
  await sleep(1500);
  expect('agents offered to the framework with a 2-cpu minimum', offeredAgents(big, t), ['a2']);
  await big.decline([bigOffer], 3600);
  await big.suppress();
  report('offer_filters', {offered: offeredAgents(big, t)});

  // A revocable task on owner's idle reservation: it ignores SIGTERM, and its KillPolicy
  // allows 60 s; it writes its pid (the shell execs sleep, so the pid stays the task's).
  const victimPidFile = path.join(workDir, 'rev-1.pid');
  const ownerPidFile = path.join(workDir, 'owner-1.pid');
  const batch = new Framework(port, 'batch', {role: 'batch', revocable: true});
  await batch.subscribe();
  const lent = await batch.offered('a1', 'cpus{REV}:2;mem{REV}:256', 5000);
  await batch.launch(lent, [{
                       id: 'rev-1',
                       resources: take(lent, {cpus: 2, mem: 128}),
                       command: `trap '' TERM; echo $$ > ${victimPidFile}; exec sleep 3600`,
                       killGraceSeconds: 60,
                     }]);
  await until('rev-1 wrote its pid', () => readPid(victimPidFile) > 0, 5000);
  const victim = readPid(victimPidFile);
  expect('rev-1 runs', alive(victim), true);
  await batch.next(
      'UPDATE', (u) => u.status.task_id.value === 'rev-1' && u.status.state === 'TASK_RUNNING', 0,
      5000, 'rev-1 running');
  await batch.suppress();
  // As root the agents isolate with cgroups, under the test's root (checked gone at the end).
  const root = cgroups ? cgroupsRootPath(cgroupsRoot) : undefined;
  if (cgroups)
    expect(`the agents' cgroups root ${root} while rev-1 runs`, fs.existsSync(root), true);
  report('launch_revocable', {task: 'rev-1', pid: victim});

  // The owner arrives and launches on its reservation: the agent evicts rev-1. The owner's
  // command records whether the victim's pid still existed when it started.
  t = now();
  const owner = new Framework(port, 'owner', {role: 'owner', revocable: false});
  await owner.subscribe();
  const reserved = await owner.offered('a1', 'cpus(owner):2;mem(owner):256', 5000);
  await owner.launch(reserved, [
    {
      id: 'owner-1',
      resources: take(reserved, {cpus: 2, mem: 128}),
      command: `echo $$ > ${ownerPidFile}; ` +
          `if kill -0 ${victim} 2>/dev/null; then echo victim alive; else echo victim gone; fi; ` +
          'exec sleep 3600',
    }
  ]);
  await owner.suppress();
  const lost = await batch.next(
      'UPDATE', (u) => u.status.task_id.value === 'rev-1' && u.status.state === 'TASK_LOST', t,
      5000, 'rev-1 evicted');
  expect('eviction of rev-1', statusOf(lost.body), {
    task: 'rev-1',
    state: 'TASK_LOST',
    reason: 'REASON_CONTAINER_PREEMPTED',
    agent: 'a1',
    uuid: true,
  });
  const ownerRunning = await owner.next(
      'UPDATE', (u) => u.status.task_id.value === 'owner-1' && u.status.state === 'TASK_RUNNING', t,
      5000, 'owner-1 running');
  const waitedMs = ownerRunning.at - lost.at;
  expect('rev-1\'s process gone when owner-1 runs', alive(victim), false);
  // SIGKILL comes 500 ms after SIGTERM (--revocable_kill_grace), not 60 s (its KillPolicy).
  expect('owner-1 waited for the SIGKILL, about 500 ms', [waitedMs >= 400, waitedMs < 2500], [
    true,
    true,
  ]);
  // Its command writes its pid and what it saw right after it starts, which may be just after
  // TASK_RUNNING.
  await until('owner-1 wrote its pid', () => readPid(ownerPidFile) > 0, 5000);
  const ownerPid = readPid(ownerPidFile);
  expect('owner-1 runs', alive(ownerPid), true);

  // What owner-1 printed, through a1's files API: its sandbox is listed in a1's /state.
  const a1State = JSON.parse((await get(ports.a1, '/state')).body);
  const executor = a1State.frameworks.flatMap((f) => f.executors)
                       .find((e) => e.id === 'owner-1' || e.tasks.some((x) => x.id === 'owner-1'));
  expect('a1 lists owner-1 with its sandbox', Boolean(executor && executor.directory), true);
  const stdoutPath =
      `/files/read?path=${encodeURIComponent(`${executor.directory}/stdout`)}&offset=0&length=100`;
  let stdout = await get(ports.a1, stdoutPath);
  for (let round = 0; round < 100 && JSON.parse(stdout.body).data === ''; ++round) {
    await sleep(20);
    stdout = await get(ports.a1, stdoutPath);
  }
  expect('owner-1\'s stdout through the files API', [stdout.status, JSON.parse(stdout.body).data], [
    200,
    'victim gone\n',
  ]);
  report('eviction_on_processes', {
    victim_pid: victim,
    owner_pid: ownerPid,
    owner_waited_ms: Math.round(waitedMs),
    owner_saw: 'victim gone',
  });

  // Kill the owner's task, then stop everything: no process of ours and no cgroup is left.
  t = now();
  await owner.call('sent_kill', (s) => s.kill('owner-1', 'a1'));
  const killed = await owner.next(
      'UPDATE', (u) => u.status.task_id.value === 'owner-1' && u.status.state === 'TASK_KILLED', t,
      5000, 'owner-1 killed');
  expect('owner-1 killed', statusOf(killed.body).state, 'TASK_KILLED');
  expect('owner-1\'s process gone', alive(ownerPid), false);
  const codes = await Promise.all(children.map((child) => stop(child, 20000)));
  expect('exit codes after SIGTERM', codes, [0, 0, 0]);
  if (cgroups)
    expect(`the agents' cgroups root ${root} after they stopped`, fs.existsSync(root), false);
  report('shutdown', {exit_codes: codes, cgroups_root_removed: cgroups});
}

run(scenario);
