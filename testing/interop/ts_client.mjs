// Drives one server with an official TypeScript SDK client: @modelcontextprotocol/sdk 1.x (2025-11-25), or
// @modelcontextprotocol/client 2.x pinned to protocol 2026-07-28.
//
//   node ts_client.mjs '<config JSON>'
//
// config: {"server": "caldav-mcp" | "carddav-mcp" | "ntfy-mcp", "command": "/path/to/script",
//          "env": {NAME: VALUE, ...}}
//      or, for a server already running over Streamable HTTP:
//         {"server": ..., "url": "http://127.0.0.1:PORT/mcp", "token": "<bearer token>"
//          [, "protocol": "2026-07-28"]}
//      Over HTTP every request carries "Authorization: Bearer <token>". Without "protocol" the 1.x client
//      speaks 2025-11-25 (the newest revision it knows), so the server keeps a session and pushes its
//      dialogs on it. With "protocol": "2026-07-28" the 2.x client pins that revision
//      (versionNegotiation {pin}): server/discover instead of initialize, no session, and each dialog comes
//      back as an input_required result that the client answers through the same elicitation handler,
//      retrying the call with inputResponses and the server's requestState. Every JSON-RPC request the
//      client POSTs is recorded, and the run checks on the wire that no initialize was sent, that every
//      request declared 2026-07-28, and that each dialog was answered by such a retry.
//
// What it does, in order, for the one server:
//   1. lists the tools and compiles every inputSchema and outputSchema with Ajv (JSON Schema 2020-12,
//      strict mode, ajv-formats for "format");
//   2. calls the server's read tools (each result passes the SDK's own outputSchema check in callTool);
//   3. on a server started with ELICITATION=false (over HTTP: from a client that declares no elicitation,
//      which the server answers the same way), calls one guarded tool without a token (the refusal
//      must carry the token readably: in _meta["approval-core/approval"] and in the text, with no
//      structuredContent), then repeats the call with that confirm_token (the change must be made);
//   4. on a server with the dialog on, from a client that declares form elicitation and answers each
//      elicitation/create with the handler below: a decline, a dismissal (cancel) and an accept of the
//      same guarded tool; only the accept may change anything;
//   5. caldav-mcp and carddav-mcp over stdio, the undo path on that same connection: an entry made and
//      deleted (the delete accepted), list_restorable naming exactly one new journal id for it (its
//      structuredContent valid against the tool's outputSchema under the Ajv of step 1), the restore tool
//      declined (nothing written, the entry still listed), accepted (the entry read back as it was before
//      the delete), and called again with the same id (an error naming no entry, no dialog, nothing written).
// Prints one JSON report on stdout ({"server", "checks": [{"step", "ok", "detail", "ms"}], "ok"}) and
// exits 1 when any check failed. Any exception the SDK throws (a strict client rejecting a result) is a
// failed check with its message.

import { Ajv2020 } from "ajv/dist/2020.js";
import addFormatsModule from "ajv-formats";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import {
  Client as ClientV2,
  StreamableHTTPClientTransport as StreamableHTTPClientTransportV2,
} from "@modelcontextprotocol/client";

const addFormats = addFormatsModule.default ?? addFormatsModule;
const APPROVAL_META = "approval-core/approval";
const config = JSON.parse(process.argv[2]);
const MODERN = config.protocol === "2026-07-28";
const checks = [];
// Each tool's compiled schemas, by "<tool>.<inputSchema|outputSchema>" (Ajv 2020-12 strict, step 1).
const validators = new Map();
// 2026-07-28 only: every JSON-RPC request the clients POSTed, in order ({method, version, params}).
const wire = [];

function record(step, ok, detail = "", ms = 0) {
  checks.push({ step, ok, detail, ms });
}

async function step(name, fn) {
  const started = performance.now();
  try {
    const detail = await fn();
    record(name, true, detail ?? "", Math.round(performance.now() - started));
  } catch (error) {
    record(name, false, String(error?.message ?? error), Math.round(performance.now() - started));
  }
}

function assert(condition, message) {
  if (!condition) throw new Error(message);
}

// Records each JSON-RPC request of a POST (the body as sent, and the MCP-Protocol-Version header), then
// sends it unchanged.
async function recordingFetch(url, init) {
  if (init?.method === "POST" && typeof init.body === "string") {
    const headers = new Headers(init.headers);
    for (const message of [JSON.parse(init.body)].flat()) {
      if (message.method) {
        wire.push({ method: message.method, version: headers.get("mcp-protocol-version"), params: message.params });
      }
    }
  }
  return fetch(url, init);
}

async function connect({ elicitation, env }) {
  const info = { name: "interop-ts-sdk", version: "1.0.0" };
  const capabilities = elicitation ? { elicitation: { form: {} } } : {};
  const client = MODERN
    ? new ClientV2(info, { capabilities, versionNegotiation: { mode: { pin: config.protocol } } })
    : new Client(info, { capabilities });
  const answers = [];
  if (elicitation) {
    // The person's answers, in order: each call of a guarded tool pops the next one. On 2026-07-28 the 2.x
    // client calls this same handler for each elicitation in an input_required result.
    const handler = async (request) => {
      const answer = answers.shift();
      assert(answer, `an unexpected dialog: ${request.params.message}`);
      const schema = request.params.requestedSchema;
      assert(schema?.properties?.approve?.type === "boolean", "the dialog asks for no boolean 'approve'");
      client.dialogs.push(request.params.message);
      return answer === "accept" ? { action: "accept", content: { approve: true } } : { action: answer };
    };
    client.setRequestHandler(MODERN ? "elicitation/create" : ElicitRequestSchema, handler);
  }
  client.answers = answers;
  client.dialogs = [];
  let transport;
  if (config.url) {
    // Over Streamable HTTP the server's settings are its own: env does not apply.
    const requestInit = { headers: { Authorization: `Bearer ${config.token}` } };
    transport = MODERN
      ? new StreamableHTTPClientTransportV2(new URL(config.url), { requestInit, fetch: recordingFetch })
      : new StreamableHTTPClientTransport(new URL(config.url), { requestInit });
  } else {
    assert(!MODERN, "2026-07-28 is driven over Streamable HTTP only");
    transport = new StdioClientTransport({
      command: config.command,
      args: [],
      env: { ...config.env, ...env },
      stderr: "pipe",
    });
    transport.stderr?.on("data", () => {}); // the server's log: drained, not shown
  }
  await client.connect(transport);
  if (MODERN) {
    const version = client.getNegotiatedProtocolVersion();
    assert(version === config.protocol, `negotiated ${version}, not ${config.protocol}`);
  }
  return client;
}

// 2026-07-28: the calls of `tool` POSTed since wire position `from`; the dialog must have come back as
// input_required, answered by `rounds` retries each carrying inputResponses and the requestState.
function answeredOnWire(tool, from, rounds) {
  const calls = wire.slice(from).filter((m) => m.method === "tools/call" && m.params?.name === tool);
  const retries = calls.filter((m) => m.params.inputResponses !== undefined);
  assert(calls.length === rounds + 1, `${calls.length} calls of ${tool} on the wire, expected ${rounds + 1}`);
  assert(calls[0].params.inputResponses === undefined, "the first call already carried inputResponses");
  assert(retries.length === rounds, `${retries.length} retries with inputResponses, expected ${rounds}`);
  for (const retry of retries) {
    assert(typeof retry.params.requestState === "string" && retry.params.requestState.length > 0,
      "a retry without requestState");
  }
  return `input_required answered by ${rounds} retry with inputResponses + requestState`;
}

async function call(client, name, args) {
  return client.callTool({ name, arguments: args });
}

function approvalOf(result) {
  const approval = result._meta?.[APPROVAL_META];
  assert(result.isError === true, `a refusal that is not isError: ${JSON.stringify(result)}`);
  assert(approval && typeof approval.outcome === "string", `no ${APPROVAL_META} in _meta: ${JSON.stringify(result)}`);
  assert(result.structuredContent === undefined, "a refusal carries structuredContent");
  return approval;
}

function textOf(result) {
  return (result.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

function ok(result, what) {
  assert(!result.isError, `${what} answered an error: ${textOf(result)}`);
  assert(result.structuredContent !== undefined, `${what} answered no structuredContent`);
  return result.structuredContent;
}

// `value` checked against `tool`'s outputSchema as compiled in the schemas step (Ajv strict), else an error.
function conforms(tool, value) {
  const validate = validators.get(`${tool}.outputSchema`);
  assert(validate, `no compiled outputSchema for ${tool}`);
  assert(validate(value), `${tool}: not valid against its outputSchema: ${JSON.stringify(validate.errors)}`);
  return value;
}

// ---------------------------------------------------------------- the servers' read tools and one guarded tool

const DAY = "2026-12-07";
const SERVERS = {
  "caldav-mcp": {
    async reads(client, state) {
      const calendars = ok(await call(client, "list_calendars", {}), "list_calendars").calendars;
      const calendar = calendars.find((c) => c.components.includes("VEVENT"));
      assert(calendar, `no calendar takes VEVENT: ${JSON.stringify(calendars)}`);
      state.calendar = calendar.id;
      ok(await call(client, "get_server_info", {}), "get_server_info");
      const made = ok(await call(client, "create_event", {
        calendar: state.calendar, summary: "Interop read", start: `${DAY}T09:00:00Z`, end: `${DAY}T10:00:00Z`,
      }), "create_event");
      const range = { start: `${DAY}T00:00:00Z`, end: `${DAY}T23:59:00Z` };
      ok(await call(client, "list_events", { calendar: state.calendar, ...range }), "list_events");
      ok(await call(client, "get_event", { calendar: state.calendar, id: made.id }), "get_event");
      ok(await call(client, "search_events", { query: "Interop", ...range }), "search_events");
      ok(await call(client, "get_free_busy", range), "get_free_busy");
      return "list_calendars get_server_info create_event list_events get_event search_events get_free_busy";
    },
    guarded: "delete_event",
    async target(client, state, label) {
      const made = ok(await call(client, "create_event", {
        calendar: state.calendar, summary: `Interop ${label}`, start: `${DAY}T12:00:00Z`, end: `${DAY}T13:00:00Z`,
      }), "create_event");
      return { calendar: state.calendar, id: made.id };
    },
    async changed(client, args) {
      const result = await call(client, "get_event", args);
      return result.isError === true; // the event is gone
    },
    restore: "restore_entry",
    place: "calendar",
    async read(client, args) {
      return ok(await call(client, "get_event", args), "get_event");
    },
  },
  "carddav-mcp": {
    async reads(client, state) {
      const books = ok(await call(client, "list_address_books", {}), "list_address_books").address_books;
      assert(books.length > 0, "no address book");
      state.book = books[0].id;
      ok(await call(client, "get_server_info", {}), "get_server_info");
      const made = ok(await call(client, "create_contact", {
        address_book: state.book, fields: { fn: "Interop Read", emails: [{ value: "read@example.org" }] },
      }), "create_contact");
      ok(await call(client, "list_contacts", { address_book: state.book }), "list_contacts");
      ok(await call(client, "get_contact", { contact_id: made.id }), "get_contact");
      ok(await call(client, "search_contacts", { query: "Interop" }), "search_contacts");
      ok(await call(client, "export_contacts", { address_book: state.book }), "export_contacts");
      ok(await call(client, "list_changes", { address_book: state.book }), "list_changes");
      ok(await call(client, "list_groups", { address_book: state.book }), "list_groups");
      return "list_address_books get_server_info create_contact list_contacts get_contact search_contacts "
        + "export_contacts list_changes list_groups";
    },
    guarded: "delete_contact",
    async target(client, state, label) {
      const made = ok(await call(client, "create_contact", {
        address_book: state.book, fields: { fn: `Interop ${label}` },
      }), "create_contact");
      return { contact_ids: [made.id] };
    },
    async changed(client, args) {
      const result = await call(client, "get_contact", { contact_id: args.contact_ids[0] });
      return result.isError === true;
    },
    restore: "restore_card",
    place: "address_book",
    async read(client, args) {
      return ok(await call(client, "get_contact", { contact_id: args.contact_ids[0] }), "get_contact");
    },
  },
  "ntfy-mcp": {
    async reads(client, state) {
      state.topic = "interop-ts";
      ok(await call(client, "get_server_info", {}), "get_server_info");
      ok(await call(client, "get_account", {}), "get_account");
      ok(await call(client, "list_users", {}), "list_users");
      ok(await call(client, "check_topic_access", { topic: state.topic }), "check_topic_access");
      ok(await call(client, "publish_message", { topics: [state.topic], message: "interop" }), "publish_message");
      const listed = ok(await call(client, "list_messages", { topics: [state.topic], since: "all" }), "list_messages");
      const first = listed.messages?.[0];
      assert(first, `list_messages found nothing: ${JSON.stringify(listed)}`);
      ok(await call(client, "get_message", { topic: state.topic, id: first.id }), "get_message");
      return "get_server_info get_account list_users check_topic_access publish_message list_messages get_message";
    },
    guarded: "create_user",
    async target(client, state, label) {
      return { username: `interop-${label}-${process.pid}`, password: "interop-password-1" };
    },
    async changed(client, args) {
      const users = ok(await call(client, "list_users", {}), "list_users").users ?? [];
      return users.some((u) => u.name === args.username);
    },
  },
};

// ---------------------------------------------------------------- the undo path (caldav-mcp, carddav-mcp)

async function restorableIds(client) {
  const listed = ok(await call(client, "list_restorable", {}), "list_restorable");
  return { listed, ids: new Set(listed.entries.map((e) => e.id)) };
}

// Step 5 of the header, on the connection that answers dialogs.
async function undo(server, client, state) {
  const kept = {};
  await step(`undo: ${server.guarded} accepted`, async () => {
    const args = await server.target(client, state, "undo");
    const before = await server.read(client, args);
    const { ids } = await restorableIds(client);
    client.answers.push("accept");
    ok(await call(client, server.guarded, args), `${server.guarded} accepted`);
    assert(await server.changed(client, args), "the accepted delete changed nothing");
    Object.assign(kept, { args, before, earlier: ids });
    return "made, read, deleted";
  });
  await step("list_restorable", async () => {
    assert(kept.args, "no entry was deleted in the step before");
    const { listed } = await restorableIds(client);
    conforms("list_restorable", listed);
    const fresh = listed.entries.filter((e) => !kept.earlier.has(e.id));
    assert(fresh.length === 1, `${fresh.length} new journal entries after one delete: ${JSON.stringify(fresh)}`);
    const [row] = fresh;
    assert(row.tool === server.guarded && row.change === "deleted", `listed as ${row.tool} ${row.change}`);
    kept.row = row;
    return `journal id ${row.id}: ${row.tool} ${row.change}, ${row.bytes} bytes; valid against outputSchema (Ajv strict)`;
  });
  const restoring = () => {
    assert(kept.row, "no journal entry was listed in the step before");
    return { [server.place]: kept.row.collection, id: kept.row.id };
  };
  await step(`${server.restore}: decline`, async () => {
    const args = restoring();
    client.answers.push("decline");
    const approval = approvalOf(await call(client, server.restore, args));
    assert(approval.outcome === "declined", `outcome ${approval.outcome}, expected declined`);
    assert(await server.changed(client, kept.args), "the entry came back after a decline");
    assert((await restorableIds(client)).ids.has(kept.row.id), "the journal entry went after a decline");
    return `outcome ${approval.outcome}, still gone, still listed`;
  });
  await step(`${server.restore}: accept`, async () => {
    const args = restoring();
    client.answers.push("accept");
    const restored = conforms(server.restore, ok(await call(client, server.restore, args), `${server.restore} accepted`));
    assert(restored.id === kept.row.id && restored.how === "create", `restored ${JSON.stringify(restored)}`);
    const after = await server.read(client, kept.args);
    assert(JSON.stringify(after) === JSON.stringify(kept.before),
      `read back ${JSON.stringify(after)}, before the delete ${JSON.stringify(kept.before)}`);
    assert(!(await restorableIds(client)).ids.has(kept.row.id), "the journal entry is still listed after its restore");
    kept.restored = true;
    return `how ${restored.how}; read back equal to before the delete; no longer listed`;
  });
  await step(`${server.restore}: again`, async () => {
    assert(kept.restored, "nothing was restored in the step before");
    const shown = client.dialogs.length;
    const result = await call(client, server.restore, restoring());
    const text = textOf(result);
    assert(result.isError === true && result.structuredContent === undefined, `not an error: ${JSON.stringify(result)}`);
    assert(result._meta?.[APPROVAL_META] === undefined, `asked again: ${JSON.stringify(result._meta)}`);
    assert(client.dialogs.length === shown, "a dialog was shown");
    assert(text.includes(`holds no entry ${kept.row.id}`), `not 'nothing to do': ${text}`);
    const after = await server.read(client, kept.args);
    assert(JSON.stringify(after) === JSON.stringify(kept.before), "the entry changed");
    return "isError, no dialog: the journal holds no entry; entry unchanged";
  });
}

// ---------------------------------------------------------------- the run

async function main() {
  const server = SERVERS[config.server];
  assert(server, `unknown server ${config.server}`);
  const state = {};
  const client = await connect({ elicitation: true, env: {} });
  let tools = [];
  await step("tools/list", async () => {
    tools = (await client.listTools()).tools;
    const version = MODERN ? client.getNegotiatedProtocolVersion() : client.transport?.protocolVersion;
    const over = config.url ? `, over HTTP on protocol ${version}` : "";
    return `${tools.length} tools${over}`;
  });
  await step("schemas: Ajv 2020-12 strict", async () => {
    const ajv = new Ajv2020({ strict: true, allErrors: true });
    addFormats(ajv);
    const problems = [];
    let compiled = 0;
    for (const tool of tools) {
      for (const kind of ["inputSchema", "outputSchema"]) {
        if (!tool[kind]) continue;
        try {
          validators.set(`${tool.name}.${kind}`, ajv.compile(tool[kind]));
          compiled += 1;
        } catch (error) {
          problems.push(`${tool.name}.${kind}: ${error.message}`);
        }
      }
    }
    assert(problems.length === 0, problems.join("; "));
    return `${compiled} schemas compiled`;
  });
  await step("read tools", () => server.reads(client, state));

  // The token path: the dialog switched off on the server, a client without elicitation.
  const tokenClient = await connect({ elicitation: false, env: { ELICITATION: "false" } });
  await step(`${server.guarded}: token path`, async () => {
    const args = await server.target(tokenClient, state, "token");
    const refusal = await call(tokenClient, server.guarded, args);
    const approval = approvalOf(refusal);
    assert(approval.outcome === "token_issued" || typeof approval.confirm_token === "string",
      `no token issued: ${JSON.stringify(approval)}`);
    const token = approval.confirm_token;
    assert(textOf(refusal).includes(token), "the text does not carry the confirm_token");
    assert(!(await server.changed(tokenClient, args)), "changed before the token came back");
    ok(await call(tokenClient, server.guarded, { ...args, confirm_token: token }), `${server.guarded} with token`);
    assert(await server.changed(tokenClient, args), "the confirmed call changed nothing");
    return `outcome ${approval.outcome}, token redeemed`;
  });
  await tokenClient.close();

  // The dialog: decline, dismiss, accept.
  for (const [answer, expected] of [["decline", "declined"], ["cancel", "cancelled"]]) {
    await step(`${server.guarded}: ${answer}`, async () => {
      const args = await server.target(client, state, answer);
      client.answers.push(answer);
      const from = wire.length;
      const approval = approvalOf(await call(client, server.guarded, args));
      assert(approval.outcome === expected, `outcome ${approval.outcome}, expected ${expected}`);
      const seen = MODERN ? `; ${answeredOnWire(server.guarded, from, 1)}` : "";
      assert(!(await server.changed(client, args)), `changed after a ${answer}`);
      return `outcome ${approval.outcome}${seen}`;
    });
  }
  await step(`${server.guarded}: accept`, async () => {
    const args = await server.target(client, state, "accept");
    client.answers.push("accept");
    const from = wire.length;
    ok(await call(client, server.guarded, args), `${server.guarded} accepted`);
    const seen = MODERN ? `; ${answeredOnWire(server.guarded, from, 1)}` : "";
    assert(await server.changed(client, args), "the accepted call changed nothing");
    return `${client.dialogs.length} dialogs shown${seen}`;
  });
  if (server.restore && !config.url) await undo(server, client, state);
  await client.close();
  if (MODERN) {
    await step("wire: 2026-07-28 only", async () => {
      const methods = new Set(wire.map((m) => m.method));
      assert(!methods.has("initialize"), "an initialize was sent");
      assert(methods.has("server/discover"), "no server/discover was sent");
      const other = wire.filter((m) => m.version !== config.protocol);
      assert(other.length === 0, `requests not on ${config.protocol}: ${JSON.stringify(other.map((m) => [m.method, m.version]))}`);
      return `${wire.length} requests (${[...methods].join(" ")}), no initialize, each MCP-Protocol-Version ${config.protocol}`;
    });
  }
}

try {
  await main();
} catch (error) {
  record("connection", false, String(error?.message ?? error));
}
const allOk = checks.length > 0 && checks.every((c) => c.ok);
process.stdout.write(JSON.stringify({ server: config.server, ok: allOk, checks }) + "\n");
process.exit(allOk ? 0 : 1);
