// The script of the approval page's grant form and grant list (served from the page's own origin).
// Making a grant asks the browser for a passkey whose challenge holds the grant's exact terms; revoking
// needs none.
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

function credentialJSON(credential) {
  if (typeof credential.toJSON === "function") return credential.toJSON();
  const r = credential.response;
  const response = { clientDataJSON: bytesToB64url(r.clientDataJSON),
                     authenticatorData: bytesToB64url(r.authenticatorData), signature: bytesToB64url(r.signature) };
  if (r.userHandle) response.userHandle = bytesToB64url(r.userHandle);
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

async function makeGrant(main, button) {
  button.disabled = true;
  const base = "/approval/g/" + encodeURIComponent(main.dataset.id);
  const csrf = main.dataset.csrf;
  const tools = Array.from(document.querySelectorAll("input.tool:checked"), (box) => box.value);
  const body = { tools: tools, uses: Number(document.getElementById("uses").value),
                 minutes: Number(document.getElementById("minutes").value) };
  try {
    const options = await post(base + "/options", csrf, body);
    if (!options.publicKey) { say(options.message || "The page cannot ask for a passkey now."); button.disabled = false; return; }
    say("Waiting for your passkey...");
    const credential = await navigator.credentials.get({ publicKey: requestOptions(options.publicKey) });
    const answer = await post(base + "/make", csrf, { terms: options.terms, credential: credentialJSON(credential) });
    say(answer.message || "Done.");
    if (!answer.final) button.disabled = false;
  } catch (error) {
    say("No passkey answered (" + error.name + "). Nothing was granted; you can try again.");
    button.disabled = false;
  }
}

async function revoke(main, button) {
  button.disabled = true;
  const answer = await post("/approval/grants/" + encodeURIComponent(button.dataset.grant) + "/revoke",
                            main.dataset.csrf, {});
  say(answer.message || "Done.");
  if (!answer.final) button.disabled = false;
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.querySelector("main[data-kind]");
  if (!main) return;
  const make = document.getElementById("make-grant");
  if (make) make.addEventListener("click", () => makeGrant(main, make));
  for (const button of document.querySelectorAll("button.revoke")) {
    button.addEventListener("click", () => revoke(main, button));
  }
});
