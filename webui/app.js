// The Harvest master's web UI: one page, no dependencies, served from the binary. It reads the
// master's own endpoints (/master/state, /master/roles, /metrics/snapshot) every second, and
// /allocator/explain for the framework on screen or /allocator/role_history for the agent on
// screen, and again as soon as the operator API's SUBSCRIBE stream reports a change; it redraws
// the view the location's hash names. Tables keep their sort, filter and scroll across
// updates; long ones draw only the rows in view, so 10k agents cost what 40 do. A task's
// sandbox is read from its agent (another origin) as Mesos's UI reads it: JSONP.
'use strict';

const POLL_MS = 1000;
const ROW_PX = 24;
const KINDS = ['cpus', 'mem', 'disk', 'gpus'];
const HISTORY = 120;  // Points kept for the charts: two minutes at one poll a second.

const model = {
  master: null, roles: null, metrics: null, explain: null, roleHistory: null, sandbox: null,
  error: null,
  events: [], cycleMs: [], offerRate: [], rescindRate: [], evictionRate: [],
  sort: {}, filter: {}, updated: 0,
};

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (key === 'text') node.textContent = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) node.append(child);
  return node;
}

function fmt(value) {
  if (value === undefined || value === null) return '-';
  if (typeof value !== 'number') return String(value);
  return Number.isInteger(value) ? String(value) : value.toFixed(2).replace(/\.?0+$/, '');
}

function resourcesText(resources) {
  if (!resources) return '-';
  const parts = KINDS.filter((k) => resources[k]).map((k) => k + ':' + fmt(resources[k]));
  return parts.length ? parts.join(' ') : '-';
}

// Mesos's full Resource objects (used_resources_full, offered_resources_full) that `pick`
// keeps, summed per kind.
function sumFull(list, pick) {
  const out = {};
  for (const r of list || []) {
    if (pick(r) && r.scalar) out[r.name] = (out[r.name] || 0) + r.scalar.value;
  }
  return out;
}
const isRevocable = (r) => r.revocable !== undefined;
const isReserved = (r) => (r.reservations || []).length > 0 || (r.role !== undefined && r.role !== '*');

function sum(list, get) { return list.reduce((total, item) => total + (get(item) || 0), 0); }
function metric(name) { return model.metrics ? (model.metrics[name] || 0) : 0; }
function agents() { return model.master ? model.master.slaves : []; }
function frameworks() { return model.master ? model.master.frameworks : []; }
function tasks() {
  return frameworks().flatMap((f) => (f.tasks || []).map((t) => Object.assign({framework: f}, t)));
}
function rolesOf(framework) {
  return (framework.roles && framework.roles.length ? framework.roles : [framework.role]).join(',');
}

// A path of this master, as an address without the page's credentials: a page opened as
// http://user:secret@host/ has them in its base address, and fetch() refuses a URL that
// carries credentials (the browser still sends them, from its authentication of the origin).
function ours(path) { return location.origin + path; }

async function getJson(path) {
  const response = await fetch(ours(path), {cache: 'no-store'});
  if (!response.ok) throw new Error(path + ' answered ' + response.status);
  return response.json();
}

// An allocator module without host affinity answers 501: the agent page says so, and the
// master is not unreadable for it.
async function readRoleHistory(agent) {
  const path = '/allocator/role_history?agent=' + encodeURIComponent(agent);
  const response = await fetch(ours(path), {cache: 'no-store'});
  if (response.status === 501) return {agent_id: agent, unsupported: true, roles: []};
  if (!response.ok) throw new Error(path + ' answered ' + response.status);
  return response.json();
}

// The agent's own endpoints, from its pid in /master/state ("slave(1)@ip:port").
function agentUrl(agent) {
  const at = (agent.pid || '').lastIndexOf('@');
  return at < 0 ? null : 'http://' + agent.pid.slice(at + 1);
}

// GET from another origin: the agent wraps its JSON in a call of the named function (?jsonp=),
// loaded as a script. Each request has its own name, removed once answered or timed out.
const JSONP_TIMEOUT_MS = 3000;
let jsonpCount = 0;
function jsonp(url) {
  return new Promise((resolve, reject) => {
    const name = 'harvestJsonp' + ++jsonpCount;
    const script = document.createElement('script');
    const end = () => { clearTimeout(timer); delete window[name]; script.remove(); };
    const timer = setTimeout(() => { end(); reject(new Error(url + ' did not answer')); }, JSONP_TIMEOUT_MS);
    window[name] = (value) => { end(); resolve(value); };
    script.onerror = () => { end(); reject(new Error(url + ' could not be read')); };
    script.src = url + (url.includes('?') ? '&' : '?') + 'jsonp=' + name;
    document.head.append(script);
  });
}

// The tail of a sandbox file shown at once: a log may be far larger than a page wants.
const SANDBOX_TAIL_BYTES = 64 * 1024;

// What the sandbox route names, read from its agent: the executor's directory (its /state),
// then the listing of the directory or path under it, or, for a file, its last bytes.
async function readSandbox(route) {
  const sandbox = {key: route.key, error: null};
  try {
    const agent = agents().find((a) => a.id === route.id);
    const base = agent && agentUrl(agent);
    if (!base) throw new Error('agent ' + route.id + ' has no address in /master/state');
    const state = await jsonp(base + '/state');
    const framework = [...state.frameworks, ...state.completed_frameworks].find((f) => f.id === route.framework);
    const executor = framework && [...framework.executors, ...framework.completed_executors]
        .find((e) => e.id === route.executor);
    if (!executor || !executor.directory) {
      throw new Error('agent ' + route.id + ' has no sandbox of ' + route.executor + ' of ' + route.framework);
    }
    const path = executor.directory + (route.path ? '/' + route.path : '');
    const query = 'path=' + encodeURIComponent(path);
    const entries = await jsonp(base + '/files/browse?' + query);
    Object.assign(sandbox, {base, directory: executor.directory, path});
    const self = entries.length === 1 && entries[0].path === path ? entries[0] : null;
    if (self && !self.mode.startsWith('d')) {
      const from = Math.max(0, self.size - SANDBOX_TAIL_BYTES);
      const read = await jsonp(base + '/files/read?' + query + '&offset=' + from + '&length=' + SANDBOX_TAIL_BYTES);
      Object.assign(sandbox, {file: self, data: read.data, offset: read.offset});
    } else {
      sandbox.entries = entries;
    }
  } catch (error) {
    sandbox.error = String(error.message || error);
  }
  model.sandbox = sandbox;
}

// Events worth a line: what appeared or went between two polls, and counters that moved.
// `seconds` since the reading before: the stream makes reads come closer than once a second.
function noteChanges(before, after, metricsBefore, metricsAfter, seconds) {
  const time = new Date().toLocaleTimeString();
  const note = (text) => model.events.unshift(time + '  ' + text);
  if (before) {
    const ids = (list) => new Set(list.map((x) => x.id));
    const diff = (old, now, what) => {
      const a = ids(old), b = ids(now);
      for (const id of b) if (!a.has(id)) note(what + ' ' + id + ' added');
      for (const id of a) if (!b.has(id)) note(what + ' ' + id + ' removed');
    };
    diff(before.slaves, after.slaves, 'agent');
    diff(before.frameworks, after.frameworks, 'framework');
    // A scheduler that goes leaves its framework disconnected until it fails over (a new
    // scheduler subscribes with the framework's id) or its failover timeout ends it.
    const connected = new Map(before.frameworks.map((f) => [f.id, f.connected]));
    for (const f of after.frameworks) {
      const was = connected.get(f.id);
      if (was === true && f.connected === false) note('framework ' + f.id + ' disconnected');
      if (was === false && f.connected === true) note('framework ' + f.id + ' failed over');
    }
    const leader = (state) => (state.leader_info || {}).id;
    if (leader(before) !== leader(after)) note('leader ' + leader(after) + ' elected');
    const states = new Map();
    for (const f of before.frameworks) for (const t of f.tasks || []) states.set(f.id + '/' + t.id, t.state);
    for (const f of after.frameworks) {
      for (const t of f.tasks || []) {
        const old = states.get(f.id + '/' + t.id);
        if (old !== t.state) note('task ' + t.id + ' of ' + f.id + ' ' + t.state);
      }
    }
  }
  if (metricsBefore) {
    const delta = (name) => (metricsAfter[name] || 0) - (metricsBefore[name] || 0);
    const rescinds = delta('master/offers_rescinded');
    const evictions = delta('master/tasks_evicted');
    if (rescinds > 0) note(rescinds + ' offer(s) rescinded');
    if (evictions > 0) note(evictions + ' task(s) evicted');
    const push = (series, value) => { series.push(value); if (series.length > HISTORY) series.shift(); };
    const perSecond = (count) => count / Math.max(seconds, 0.001);
    push(model.offerRate, perSecond(delta('master/offers_sent')));
    push(model.rescindRate, perSecond(rescinds));
    push(model.evictionRate, perSecond(evictions));
  }
  model.cycleMs.push(metricsAfter['allocator/harvest/allocation_run_ms/p50'] || 0);
  if (model.cycleMs.length > HISTORY) model.cycleMs.shift();
  model.events.length = Math.min(model.events.length, 200);
}

// One read of the master at a time: a request to read while one runs makes one more read
// after it, so a burst of changes costs two reads, not one each (at 10k agents a read of
// /master/state is 5.5 MB).
let polling = false;
let pollAgain = false;
async function poll() {
  if (polling) {
    pollAgain = true;
    return;
  }
  polling = true;
  pollAgain = false;
  await readMaster();
  polling = false;
  if (pollAgain) poll();
}

async function readMaster() {
  try {
    const [master, roles, metrics] = await Promise.all(
        [getJson('/master/state'), getJson('/master/roles'), getJson('/metrics/snapshot')]);
    const route = parseRoute();
    if (route.view === 'framework') {
      model.explain = await getJson('/allocator/explain?framework=' + encodeURIComponent(route.id));
    }
    if (route.view === 'agent') model.roleHistory = await readRoleHistory(route.id);
    const now = Date.now();
    noteChanges(model.master, master, model.metrics, metrics, (now - model.updated) / 1000);
    Object.assign(model, {master, roles, metrics, error: null, updated: now});
    if (route.view === 'sandbox') await readSandbox(route);
  } catch (error) {
    model.error = String(error.message || error);
  }
  update();
}

// Live updates: the operator API's SUBSCRIBE stream, in protobuf (RecordIO: "<bytes>\n<Event>").
// Every event but HEARTBEAT and the first, SUBSCRIBED (the state the page has just read),
// reads the master again at once, so a change shows after one read instead of up to a poll
// period later. The poll goes on for the charts' per-second rates and whenever the stream is
// closed, and the stream is opened again after RESUBSCRIBE_MS.
//
// Protobuf rather than JSON because the page needs only each event's type, and SUBSCRIBED
// carries the whole state: at 10k agents 1.8 MB of protobuf against 5.7 MB of JSON, which
// the master takes about a fifth of the time to write (34 against 190 ms, docs/NUMBERS.md)
// and the page never has to parse.
const RESUBSCRIBE_MS = 2000;
const EVENT_SUBSCRIBED = 1;
const EVENT_HEARTBEAT = 9;
const NEWLINE = 10;
const MAX_LENGTH_DIGITS = 20;
const TYPE_BYTES = 6;  // The type's tag and a varint of up to five bytes.

// An Event's type from its first bytes: protobuf writes fields in number order and the type
// is field 1, a varint (tag byte 0x08). 0, UNKNOWN, when it is not there.
function eventType(head) {
  if (head[0] !== 0x08) return 0;
  let value = 0;
  for (let i = 1, shift = 0; i < head.length; ++i, shift += 7) {
    value += (head[i] & 0x7f) * 2 ** shift;
    if (!(head[i] & 0x80)) return value;
  }
  return 0;
}

// Reads RecordIO as it streams in and keeps only the first bytes of each record: the rest is
// skipped as it arrives, so a record of megabytes is neither stored nor copied.
class EventTypeReader {
  constructor() {
    this.digits = '';
    this.left = -1;  // Bytes of the current record still to come; -1 while reading a length.
    this.head = [];
  }
  // The types of the records that end within `bytes`.
  push(bytes) {
    const types = [];
    let i = 0;
    while (i < bytes.length) {
      if (this.left < 0) {
        const byte = bytes[i++];
        if (byte !== NEWLINE) {
          if (byte < 0x30 || byte > 0x39 || this.digits.length >= MAX_LENGTH_DIGITS) {
            throw new Error('bad RecordIO length');
          }
          this.digits += String.fromCharCode(byte);
          continue;
        }
        if (this.digits === '') throw new Error('bad RecordIO length');
        this.left = Number(this.digits);
        this.digits = '';
        this.head = [];
      }
      const take = Math.min(this.left, bytes.length - i);
      for (let k = 0; k < take && this.head.length < TYPE_BYTES; ++k) this.head.push(bytes[i + k]);
      i += take;
      this.left -= take;
      if (this.left === 0) {
        types.push(eventType(this.head));
        this.left = -1;
      }
    }
    return types;
  }
}

async function follow() {
  try {
    const response = await fetch(ours('/api/v1'), {
      method: 'POST', cache: 'no-store', body: JSON.stringify({type: 'SUBSCRIBE'}),
      headers: {'Content-Type': 'application/json', 'Accept': 'application/x-protobuf'}});
    if (!response.ok || !response.body) throw new Error('SUBSCRIBE answered ' + response.status);
    document.body.dataset.stream = 'open';
    const reader = response.body.getReader();
    const events = new EventTypeReader();
    for (;;) {
      const {value, done} = await reader.read();
      if (done) break;
      const types = events.push(value).filter((type) => type !== EVENT_HEARTBEAT);
      // The number of the last event's type, for a look from outside (tests).
      if (types.length) document.body.dataset.lastEvent = String(types[types.length - 1]);
      if (types.some((type) => type !== EVENT_SUBSCRIBED)) poll();
    }
  } catch (error) {
    // A closed stream is not the master failing: the poll still shows whether it answers.
  }
  document.body.dataset.stream = 'closed';
  setTimeout(follow, RESUBSCRIBE_MS);
}

// A sortable, filterable table that draws only the rows in view.
class Table {
  constructor(name, columns, rowKey, link) {
    this.name = name;
    this.columns = columns;
    this.rowKey = rowKey;
    this.link = link;
    this.rows = [];
    this.sort = model.sort[name] || {column: 0, down: false};
    this.filterInput = el('input', {class: 'filter', placeholder: 'filter', value: model.filter[name] || '',
                                    'data-testid': name + '-filter', oninput: () => this.refresh()});
    const head = el('tr', {}, ...columns.map((c, i) => el('th', {
      class: c.num ? 'num' : '', text: c.label, onclick: () => this.sortBy(i)})));
    this.body = el('tbody');
    this.top = el('tr', {class: 'pad'});
    this.bottom = el('tr', {class: 'pad'});
    this.table = el('table', {'data-testid': name}, el('thead', {}, head), this.body);
    this.scroller = el('div', {class: 'scroller', onscroll: () => this.draw()}, this.table);
    this.count = el('div', {class: 'muted', 'data-testid': name + '-count'});
    this.node = el('div', {}, this.filterInput, this.count, this.scroller);
  }
  sortBy(column) {
    this.sort = {column, down: this.sort.column === column ? !this.sort.down : false};
    model.sort[this.name] = this.sort;
    this.refresh();
  }
  setRows(rows) { this.all = rows; this.refresh(); }
  refresh() {
    const query = this.filterInput.value.toLowerCase();
    model.filter[this.name] = this.filterInput.value;
    const text = (row) => this.columns.map((c) => String(c.get(row))).join(' ').toLowerCase();
    this.rows = query ? this.all.filter((row) => text(row).includes(query)) : this.all.slice();
    const column = this.columns[this.sort.column];
    const value = (row) => column.get(row);
    this.rows.sort((a, b) => {
      const x = value(a), y = value(b);
      const order = typeof x === 'number' && typeof y === 'number' ? x - y : String(x).localeCompare(String(y));
      return this.sort.down ? -order : order;
    });
    this.count.textContent = this.rows.length + ' of ' + this.all.length;
    this.draw();
  }
  draw() {
    const visible = Math.ceil((this.scroller.clientHeight || 600) / ROW_PX) + 10;
    const first = Math.max(0, Math.floor(this.scroller.scrollTop / ROW_PX) - 5);
    const last = Math.min(this.rows.length, first + visible);
    const rows = [];
    rows.push(el('tr', {style: 'height:' + first * ROW_PX + 'px'}));
    for (let i = first; i < last; ++i) {
      const row = this.rows[i];
      const cells = this.columns.map((c, index) => {
        const content = fmt(c.get(row));
        const cell = el('td', {class: c.num ? 'num' : ''});
        const href = c.href || (index === 0 ? this.link : null);
        if (href) cell.append(el('a', {href: href(row), text: content}));
        else cell.textContent = content;
        return cell;
      });
      rows.push(el('tr', {'data-key': this.rowKey(row)}, ...cells));
    }
    rows.push(el('tr', {style: 'height:' + (this.rows.length - last) * ROW_PX + 'px'}));
    this.body.replaceChildren(...rows);
  }
}

function sparkline(series, label) {
  const width = 240, height = 48;
  const max = Math.max(1e-9, ...series);
  const points = series.map((v, i) => (i * width / Math.max(1, HISTORY - 1)).toFixed(1) + ',' +
                                      (height - 2 - (v / max) * (height - 4)).toFixed(1)).join(' ');
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'spark');
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  const line = document.createElementNS('http://www.w3.org/2000/svg', 'polyline');
  line.setAttribute('points', points);
  svg.append(line);
  const last = series.length ? series[series.length - 1] : 0;
  return el('div', {class: 'card'}, el('div', {class: 'label', text: label + ' (now ' + fmt(last) + ')'}), svg);
}

function card(label, value, id) {
  return el('div', {class: 'card'}, el('div', {class: 'value', 'data-testid': id, text: fmt(value)}),
            el('div', {class: 'label', text: label}));
}

// Totals per kind: what the agents hold, use, are offered and reserve, and what the revocable
// stage lends (idle reservations, and quota headroom held back for guarantees).
function totalsTable() {
  const list = agents();
  const reserved = (a, k) => sum(Object.values(a.reserved_resources || {}), (r) => r[k]);
  // Reserved and idle: what reservations hold that no task uses (on offer or not).
  const idle = (a, k) => Math.max(0, reserved(a, k) - (sumFull(a.used_resources_full, isReserved)[k] || 0));
  const rows = KINDS.map((k) => [k,
    sum(list, (a) => a.resources[k]), sum(list, (a) => a.used_resources[k]),
    sum(list, (a) => a.offered_resources[k]), sum(list, (a) => reserved(a, k)), sum(list, (a) => idle(a, k)),
    metric('allocator/harvest/revocable/non_throttleable/allocated/' + k),
    metric('allocator/harvest/revocable/headroom/allocated/' + k)]);
  const head = ['kind', 'total', 'used', 'offered', 'reserved', 'reserved idle', 'lent revocable',
                'lent headroom'];
  return el('table', {'data-testid': 'totals'},
            el('thead', {}, el('tr', {}, ...head.map((h, i) => el('th', {class: i ? 'num' : '', text: h})))),
            el('tbody', {}, ...rows.map((r) => el('tr', {'data-key': r[0]},
                ...r.map((v, i) => el('td', {class: i ? 'num' : '', text: fmt(v)}))))));
}

// The roles host affinity's history holds for one agent (GET /allocator/role_history): what
// runs there now, and where a role would go back first ("held first": the agent is in the
// role's list of available agents, so once free it is offered to that role before others).
function roleHistoryTable(answer) {
  if (answer.unsupported) {
    return el('div', {class: 'muted', 'data-testid': 'role-history',
                      text: 'not kept by this allocator (it has no host affinity)'});
  }
  if (!answer.roles.length) {
    return el('div', {class: 'muted', 'data-testid': 'role-history',
                      text: 'none (no role has run here, or host affinity is off)'});
  }
  const ago = (r) => (r.has_history ? fmt(Math.round((answer.now_ns - r.last_used_ns) / 1e9)) + ' s ago'
                                    : '-');
  const head = ['role', 'allocations', 'has history', 'held first', 'failures', 'last used'];
  return el('table', {'data-testid': 'role-history'},
            el('thead', {}, el('tr', {}, ...head.map((h, i) => el('th', {
              class: i === 1 || i === 4 ? 'num' : '', text: h})))),
            el('tbody', {}, ...answer.roles.map((r) => el('tr', {'data-key': r.role},
                el('td', {text: r.role}), el('td', {class: 'num', text: fmt(r.allocations)}),
                el('td', {text: r.has_history ? 'yes' : 'no'}),
                el('td', {text: r.preferred ? 'yes' : 'no'}),
                el('td', {class: 'num', text: fmt(r.failures)}), el('td', {text: ago(r)})))));
}

// The allocator's last word on each agent for one framework (GET /allocator/explain).
function explainTable(decisions) {
  const detail = (d) => ['role', 'kind', 'framework_id', 'capability', 'remaining_seconds']
      .filter((k) => d[k] !== undefined).map((k) => k + '=' + fmt(d[k])).join(' ');
  const rows = decisions.map((d) => el('tr', {'data-key': d.agent_id}, el('td', {text: d.agent_id}),
                                       el('td', {text: d.reason}), el('td', {text: detail(d)})));
  const head = el('tr', {}, ...['agent', 'reason', 'detail'].map((h) => el('th', {text: h})));
  return el('table', {'data-testid': 'explain'}, el('thead', {}, head), el('tbody', {}, ...rows));
}

// A command task's executor is the task itself (Mesos's command executor takes the task's id).
function sandboxHash(agent, framework, executor, path) {
  return '#/agents/' + [agent, 'sandbox', framework, executor].map(encodeURIComponent).join('/') +
         (path ? '/' + path.split('/').map(encodeURIComponent).join('/') : '');
}

function sandboxLink(task) {
  return el('a', {href: sandboxHash(task.slave_id, task.framework.id, task.executor_id || task.id),
                  'data-testid': 'sandbox-link', text: 'sandbox'});
}

function sizeText(bytes) {
  if (bytes < 1024) return bytes + ' B';
  return bytes < 1024 * 1024 ? fmt(bytes / 1024) + ' KiB' : fmt(bytes / (1024 * 1024)) + ' MiB';
}

// One sandbox, as its agent answers: a directory's entries (each a link further in, and files a
// download from the agent), or a file's last bytes.
function sandboxView(route, sandbox) {
  const title = el('h2', {text: 'Sandbox of ' + route.executor + ' of ' + route.framework + ' on ' + route.id});
  const crumbs = [el('a', {href: sandboxHash(route.id, route.framework, route.executor), text: 'sandbox'})];
  const parts = route.path ? route.path.split('/') : [];
  parts.forEach((part, i) => crumbs.push(' / ', el('a', {
    href: sandboxHash(route.id, route.framework, route.executor, parts.slice(0, i + 1).join('/')), text: part})));
  const where = el('p', {'data-testid': 'sandbox-path'}, ...crumbs);
  if (!sandbox) return [title, where, el('div', {class: 'muted', text: 'loading'})];
  if (sandbox.error) return [title, where, el('p', {class: 'error', 'data-testid': 'sandbox-error', text: sandbox.error})];
  const download = (path) => sandbox.base + '/files/download?path=' + encodeURIComponent(path);
  if (sandbox.file) {
    const shown = sandbox.offset > 0 ? 'last ' + sizeText(sandbox.file.size - sandbox.offset) + ' of ' : '';
    return [title, where,
            el('p', {class: 'muted'}, shown + sizeText(sandbox.file.size) + ' · ',
               el('a', {href: download(sandbox.path), 'data-testid': 'sandbox-download', text: 'download'})),
            el('pre', {class: 'file', 'data-testid': 'sandbox-file', text: sandbox.data})];
  }
  const relative = (path) => path.slice(sandbox.directory.length + 1);
  const head = ['name', 'size', 'mode', 'modified', ''];
  const rows = sandbox.entries.map((entry) => {
    const name = entry.path.slice(entry.path.lastIndexOf('/') + 1);
    const link = el('a', {href: sandboxHash(route.id, route.framework, route.executor, relative(entry.path)), text: name});
    const isFile = !entry.mode.startsWith('d');
    return el('tr', {'data-key': name}, el('td', {}, link), el('td', {class: 'num', text: isFile ? sizeText(entry.size) : '-'}),
              el('td', {text: entry.mode}), el('td', {text: new Date(entry.mtime * 1000).toLocaleString()}),
              el('td', {}, isFile ? el('a', {href: download(entry.path), text: 'download'}) : ''));
  });
  return [title, where,
          el('table', {'data-testid': 'sandbox-files'},
             el('thead', {}, el('tr', {}, ...head.map((h, i) => el('th', {class: i === 1 ? 'num' : '', text: h})))),
             el('tbody', {}, ...rows))];
}

const views = {
  overview: {
    build() { return el('div'); },
    update(node) {
      const running = tasks().filter((t) => t.state === 'TASK_RUNNING').length;
      node.replaceChildren(
          el('div', {class: 'cards'},
             card('agents', agents().length, 'agents-count'),
             card('frameworks', frameworks().length, 'frameworks-count'),
             card('tasks running', running, 'tasks-running'),
             card('allocation cycles', metric('master/allocation_cycles'), 'cycles')),
          el('h2', {text: 'Resources'}), totalsTable(),
          el('h2', {text: 'Live'}),
          el('div', {class: 'cards'}, sparkline(model.cycleMs, 'allocation cycle p50 ms'),
             sparkline(model.offerRate, 'offers / s'), sparkline(model.rescindRate, 'rescinds / s'),
             sparkline(model.evictionRate, 'evictions / s')),
          el('h2', {text: 'Recent events'}),
          el('div', {class: 'events', 'data-testid': 'events'},
             ...(model.events.length ? model.events : ['none yet']).map((e) => el('div', {text: e}))));
    },
  },
  agents: {
    build() {
      this.table = new Table('agents', [
        {label: 'id', get: (a) => a.id}, {label: 'hostname', get: (a) => a.hostname},
        {label: 'active', get: (a) => (a.active ? 'yes' : 'no')},
        {label: 'cpus', num: true, get: (a) => a.resources.cpus},
        {label: 'cpus used', num: true, get: (a) => a.used_resources.cpus},
        {label: 'cpus offered', num: true, get: (a) => a.offered_resources.cpus},
        {label: 'mem', num: true, get: (a) => a.resources.mem},
        {label: 'mem used', num: true, get: (a) => a.used_resources.mem},
        {label: 'reserved for', get: (a) => Object.keys(a.reserved_resources || {}).join(',')},
      ], (a) => a.id, (a) => '#/agents/' + encodeURIComponent(a.id));
      return this.table.node;
    },
    update() { this.table.setRows(agents()); },
  },
  agent: {
    build() { return el('div'); },
    update(node, id) {
      const agent = agents().find((a) => a.id === id);
      if (!agent) return node.replaceChildren(el('p', {class: 'error', text: 'no agent ' + id}));
      const on = tasks().filter((t) => t.slave_id === id);
      const reserved = Object.entries(agent.reserved_resources || {});
      const history = model.roleHistory && model.roleHistory.agent_id === id ? model.roleHistory : null;
      node.replaceChildren(
          el('h2', {text: 'Agent ' + agent.id + ' (' + agent.hostname + ')'}),
          el('p', {'data-testid': 'agent-resources',
                   text: 'total ' + resourcesText(agent.resources) + ' · used ' +
                         resourcesText(agent.used_resources) + ' · offered ' +
                         resourcesText(agent.offered_resources)}),
          el('p', {'data-testid': 'agent-lent',
                   text: 'lent as revocable: in use ' +
                         resourcesText(sumFull(agent.used_resources_full, isRevocable)) +
                         ' · offered ' + resourcesText(sumFull(agent.offered_resources_full, isRevocable))}),
          el('h2', {text: 'Reserved'}),
          ...(reserved.length ? reserved.map(([role, r]) => el('div', {text: role + ': ' + resourcesText(r)}))
                              : [el('div', {class: 'muted', text: 'nothing'})]),
          el('h2', {text: 'Role history (host affinity)'}),
          history ? roleHistoryTable(history) : el('div', {class: 'muted', text: 'loading'}),
          el('h2', {text: 'Tasks'}),
          ...(on.length ? on.map((t) => el('div', {'data-key': t.id},
                                           t.id + ' of ' + t.framework.id + ': ' + t.state + ', ' +
                                               resourcesText(t.resources) + ' · ',
                                           sandboxLink(t)))
                        : [el('div', {class: 'muted', text: 'none'})]));
    },
  },
  sandbox: {
    build() { return el('div'); },
    update(node, id, route) {
      const sandbox = model.sandbox && model.sandbox.key === route.key ? model.sandbox : null;
      node.replaceChildren(...sandboxView(route, sandbox));
    },
  },
  frameworks: {
    build() {
      this.table = new Table('frameworks', [
        {label: 'id', get: (f) => f.id}, {label: 'name', get: (f) => f.name},
        {label: 'roles', get: rolesOf},
        {label: 'active', get: (f) => (f.active ? 'yes' : 'no')},
        {label: 'connected', get: (f) => (f.connected === false ? 'no' : 'yes')},
        {label: 'tasks', num: true, get: (f) => (f.tasks || []).length},
        {label: 'offers', num: true, get: (f) => (f.offers || []).length},
        {label: 'cpus used', num: true, get: (f) => (f.used_resources || {}).cpus},
        {label: 'mem used', num: true, get: (f) => (f.used_resources || {}).mem},
      ], (f) => f.id, (f) => '#/frameworks/' + encodeURIComponent(f.id));
      return this.table.node;
    },
    update() { this.table.setRows(frameworks()); },
  },
  framework: {
    build() { return el('div'); },
    update(node, id) {
      const framework = frameworks().find((f) => f.id === id);
      if (!framework) return node.replaceChildren(el('p', {class: 'error', text: 'no framework ' + id}));
      const explain = model.explain && model.explain.framework_id === id ? model.explain : null;
      const decisions = explain ? explain.agents : [];
      // The allocator's word on it, from the last cycle's explanation.
      const suppressed = [...new Set(decisions.filter((d) => d.reason === 'suppressed' && d.role)
                                              .map((d) => d.role))].sort();
      const failover = framework.connected === false
          ? 'disconnected: ends unless a scheduler fails over within ' + fmt(framework.failover_timeout) + ' s'
          : 'connected (failover timeout ' + fmt(framework.failover_timeout) + ' s)';
      node.replaceChildren(
          el('h2', {text: 'Framework ' + framework.id + ' (' + framework.name + ')'}),
          el('p', {text: 'roles ' + rolesOf(framework) + ' · capabilities ' +
                         ((framework.capabilities || []).join(', ') || 'none') + ' · ' +
                         (framework.active ? 'active' : 'inactive') + ' · ' +
                         (framework.offers || []).length + ' offer(s) held'}),
          el('p', {'data-testid': 'framework-state',
                   text: failover + ' · suppressed roles: ' +
                         (explain ? (suppressed.join(', ') || 'none') : 'loading')}),
          el('h2', {text: 'Why no offers? (per agent, last cycle)'}),
          explainTable(decisions),
          el('h2', {text: 'Tasks'}),
          ...(framework.tasks || []).map((t) => el('div', {'data-key': t.id},
                                                   t.id + ' on ' + t.slave_id + ': ' + t.state + ' · ',
                                                   sandboxLink(Object.assign({framework}, t)))));
    },
  },
  roles: {
    build() {
      const share = (r) => metric('allocator/harvest/roles/' + r.name + '/shares/dominant');
      const quota = (r, part) => resourcesText((r.quota || {})[part]);
      // Mesos's consumed quota (reservations and unreserved allocations, every kind), from the
      // allocator's gauges; headroom: what the guarantee still promises.
      const consumed = (r) => {
        const out = {};
        for (const k of KINDS) {
          out[k] = metric('allocator/harvest/quota/roles/' + r.name + '/resources/' + k + '/consumed');
        }
        return out;
      };
      const headroom = (r) => {
        const out = {};
        const taken = consumed(r);
        for (const [k, v] of Object.entries((r.quota || {}).guarantee || {})) out[k] = Math.max(0, v - taken[k]);
        return out;
      };
      this.table = new Table('roles', [
        {label: 'role', get: (r) => r.name}, {label: 'weight', num: true, get: (r) => r.weight},
        {label: 'frameworks', num: true, get: (r) => r.frameworks.length},
        {label: 'allocated', get: (r) => resourcesText(r.allocated)},
        {label: 'reserved', get: (r) => resourcesText(r.reserved)},
        {label: 'guarantee', get: (r) => quota(r, 'guarantee')},
        {label: 'limit', get: (r) => quota(r, 'limit')},
        {label: 'consumed', get: (r) => (r.quota && r.quota.guarantee ? resourcesText(consumed(r)) : '-')},
        {label: 'headroom', get: (r) => (r.quota && r.quota.guarantee ? resourcesText(headroom(r)) : '-')},
        {label: 'dominant share', num: true, get: share},
      ], (r) => r.name, null);
      return this.table.node;
    },
    update() { this.table.setRows(model.roles ? model.roles.roles : []); },
  },
  tasks: {
    build() {
      this.table = new Table('tasks', [
        {label: 'id', get: (t) => t.id}, {label: 'framework', get: (t) => t.framework.id},
        {label: 'agent', get: (t) => t.slave_id}, {label: 'state', get: (t) => t.state},
        {label: 'cpus', num: true, get: (t) => (t.resources || {}).cpus},
        {label: 'mem', num: true, get: (t) => (t.resources || {}).mem},
        {label: 'revocable', get: (t) => (t.revocable ? 'yes' : 'no')},
        {label: 'sandbox', get: () => 'sandbox',
         href: (t) => sandboxHash(t.slave_id, t.framework.id, t.executor_id || t.id)},
      ], (t) => t.framework.id + '/' + t.id, (t) => '#/agents/' + encodeURIComponent(t.slave_id));
      return this.table.node;
    },
    update() { this.table.setRows(tasks()); },
  },
};

function parseRoute() {
  const parts = location.hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  if (parts[0] === 'agents' && parts[2] === 'sandbox' && parts[3] && parts[4]) {
    const path = parts.slice(5).filter((p) => p).join('/');
    return {view: 'sandbox', id: parts[1], framework: parts[3], executor: parts[4], path,
            key: [parts[1], parts[3], parts[4], path].join('\n')};
  }
  if (parts[0] === 'agents' && parts[1]) return {view: 'agent', id: parts[1]};
  if (parts[0] === 'frameworks' && parts[1]) return {view: 'framework', id: parts[1]};
  return {view: views[parts[0]] ? parts[0] : 'overview', id: null};
}

let shown = null;  // {key, node} of the view on screen.
function update() {
  const route = parseRoute();
  const key = route.view + '/' + (route.key || route.id);
  const view = views[route.view];
  if (!shown || shown.key !== key) {
    shown = {key, node: view.build()};
    document.getElementById('view').replaceChildren(shown.node);
    const section = route.view === 'sandbox' ? 'agent' : route.view;  // A sandbox is an agent's.
    for (const a of document.querySelectorAll('nav a')) {
      a.classList.toggle('active', section.startsWith(a.dataset.view.replace(/s$/, '')));
    }
  }
  if (model.master) view.update(shown.node, route.id, route);
  const leader = model.master ? model.master.leader_info || {} : {};
  document.getElementById('leader').textContent = model.master
      ? 'leader ' + ((leader.address || {}).hostname || '?') + ':' + ((leader.address || {}).port || '?') +
        ' · version ' + model.master.version : '';
  const status = document.getElementById('status');
  status.textContent = model.error ? 'cannot read the master: ' + model.error
                                   : 'updated ' + new Date(model.updated).toLocaleTimeString();
  status.className = model.error ? 'error' : '';
  document.body.dataset.updates = String(Number(document.body.dataset.updates || 0) + 1);
}

window.addEventListener('hashchange', () => { update(); poll(); });
// The first read draws the page; the stream, whose first event is the whole state again, is
// opened only after it, so it does not slow the first picture of a large cluster.
poll().then(follow);
setInterval(poll, POLL_MS);
