// The approval page's only script (served from the page's own origin; no inline code is allowed).
// It asks the browser for a passkey (WebAuthn, user verification required) and posts the answer.
"use strict";

function b64urlToBytes(text) {
  const padded = text.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((text.length + 3) % 4);
  const raw = atob(padded);
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

function bytesToB64url(buffer) {
  const bytes = new Uint8Array(buffer);
  let raw = "";
  for (const b of bytes) raw += String.fromCharCode(b);
  return btoa(raw).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function requestOptions(json) {
  if (window.PublicKeyCredential && PublicKeyCredential.parseRequestOptionsFromJSON) {
    return PublicKeyCredential.parseRequestOptionsFromJSON(json);
  }
  const options = Object.assign({}, json, { challenge: b64urlToBytes(json.challenge) });
  options.allowCredentials = (json.allowCredentials || []).map((c) => Object.assign({}, c, { id: b64urlToBytes(c.id) }));
  return options;
}

function creationOptions(json) {
  if (window.PublicKeyCredential && PublicKeyCredential.parseCreationOptionsFromJSON) {
    return PublicKeyCredential.parseCreationOptionsFromJSON(json);
  }
  const options = Object.assign({}, json, { challenge: b64urlToBytes(json.challenge) });
  options.user = Object.assign({}, json.user, { id: b64urlToBytes(json.user.id) });
  options.excludeCredentials = (json.excludeCredentials || []).map((c) => Object.assign({}, c, { id: b64urlToBytes(c.id) }));
  return options;
}

function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const r = credential.response;
  const response = { clientDataJSON: bytesToB64url(r.clientDataJSON) };
  if (r.attestationObject) {
    response.attestationObject = bytesToB64url(r.attestationObject);
    if (r.getTransports) response.transports = r.getTransports();
  } else {
    response.authenticatorData = bytesToB64url(r.authenticatorData);
    response.signature = bytesToB64url(r.signature);
    if (r.userHandle) response.userHandle = bytesToB64url(r.userHandle);
  }
  return { id: credential.id, rawId: bytesToB64url(credential.rawId), type: credential.type, response: response,
           clientExtensionResults: credential.getClientExtensionResults(),
           authenticatorAttachment: credential.authenticatorAttachment };
}

async function post(url, csrf, body) {
  const reply = await fetch(url, {
    method: "POST", credentials: "same-origin", cache: "no-store",
    headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
    body: JSON.stringify(body),
  });
  let data = {};
  try { data = await reply.json(); } catch (e) { data = { message: "The page's server answered " + reply.status + "." }; }
  return data;
}

function say(text) {
  document.getElementById("state").textContent = text;
}

function lock() {
  for (const b of document.querySelectorAll("button")) b.disabled = true;
}

function unlock() {
  for (const b of document.querySelectorAll("button")) b.disabled = false;
}

async function decide(main, choice) {
  lock();
  const base = "/approval/a/" + encodeURIComponent(main.dataset.id);
  const csrf = main.dataset.csrf;
  try {
    const body = { choice: choice };
    if (choice === "approve") {
      const options = await post(base + "/options", csrf, {});
      if (!options.publicKey) { say(options.message || "The page cannot ask for a passkey now."); return; }
      say("Waiting for your passkey...");
      const credential = await navigator.credentials.get({ publicKey: requestOptions(options.publicKey) });
      body.credential = credentialJSON(credential);
    }
    const answer = await post(base + "/decide", csrf, body);
    say(answer.message || "Done.");
    if (answer.grant_url) {
      const link = document.createElement("a");
      link.id = "grant-link";
      link.href = answer.grant_url;
      link.textContent = "Let calls like this one run without asking for a while (a standing grant)";
      document.getElementById("state").after(link);
    }
    if (!answer.final) unlock();
  } catch (error) {
    say("No passkey answered (" + error.name + "). Nothing was approved; you can try again.");
    unlock();
  }
}

async function pair(main) {
  lock();
  const base = "/approval/pair/" + encodeURIComponent(main.dataset.secret);
  const csrf = main.dataset.csrf;
  const code = document.getElementById("code").value;
  try {
    const options = await post(base + "/options", csrf, { code: code });
    if (options.authentication) {
      say("Now a passkey paired before must agree to the new one...");
      const vouch = await navigator.credentials.get({ publicKey: requestOptions(options.authentication) });
      const agreed = await post(base + "/vouch", csrf, { code: code, credential: credentialJSON(vouch) });
      say(agreed.message || "Done.");
      if (!agreed.final) unlock();
      return;
    }
    if (!options.registration) { say(options.message || "This pairing link cannot be used."); return; }
    say("Now make the new passkey...");
    const created = await navigator.credentials.create({ publicKey: creationOptions(options.registration) });
    const answer = await post(base + "/finish", csrf, { code: code, credential: credentialJSON(created) });
    say(answer.message || "Done.");
    if (!answer.final) unlock();
  } catch (error) {
    say("No passkey was made (" + error.name + "). You can try again.");
    unlock();
  }
}

// Approve answers only a deliberate press: one made after the page has been visible and focused for a
// moment, and after a pause in the person's input. So a page that swaps this one in under the pointer, or
// that keeps the person clicking or typing (a game), cannot carry a click or a key press onto Approve.
const SETTLE_MS = 800;
const QUIET_MS = 500;
let settledSince = null;
let lastInput = -Infinity;
let quietBeforePress = 0;

function watchAttention() {
  const reset = () => { settledSince = document.visibilityState === "visible" ? performance.now() : null; };
  reset();
  document.addEventListener("visibilitychange", reset);
  window.addEventListener("focus", reset);
  window.addEventListener("blur", () => { settledSince = null; });
  const input = (event) => {
    if (event.repeat) { lastInput = event.timeStamp; quietBeforePress = 0; return; }
    quietBeforePress = event.timeStamp - lastInput;
    lastInput = event.timeStamp;
  };
  window.addEventListener("pointerdown", input, true);
  window.addEventListener("keydown", input, true);
}

function attentive() {
  return settledSince !== null && lastInput - settledSince >= SETTLE_MS && quietBeforePress >= QUIET_MS;
}

// A stored time is drawn in the entry's own zone by the server; its instant (UTC, in the time element's
// datetime attribute) is written here in the browser's zone, as text (never as markup).
function localTimes() {
  for (const element of document.querySelectorAll("time[datetime]")) {
    const instant = new Date(element.getAttribute("datetime"));
    if (Number.isNaN(instant.getTime())) continue;
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone || "";
    element.textContent = instant.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "short" }) +
      (zone ? " " + zone : "");
  }
}

document.addEventListener("DOMContentLoaded", () => {
  localTimes();
  const main = document.querySelector("main[data-kind]");
  if (!main) return;
  watchAttention();
  const approve = document.getElementById("approve");
  const deny = document.getElementById("deny");
  const pairing = document.getElementById("pair");
  if (approve) approve.addEventListener("click", () => {
    if (!attentive()) { say("Read the request first, then press Approve again."); return; }
    decide(main, "approve");
  });
  if (deny) deny.addEventListener("click", () => decide(main, "deny"));
  if (pairing) pairing.addEventListener("click", () => pair(main));
});
