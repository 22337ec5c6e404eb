// The script of the approval page's grant form and grant list (served from the page's own origin), loaded
// after approval.js, whose passkey and request helpers (requestOptions, credentialJSON, post, say) it uses.
// Making a grant asks the browser for a passkey whose challenge holds the grant's exact terms; revoking
// needs none.
"use strict";

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
