// The set page's script (after approval.js, whose helpers it uses: post, say, lock, unlock, attentive,
// requestOptions, credentialJSON). It approves exactly the calls the page drew (data-items), never one that
// arrived after the page was drawn; a call denied on its own reloads the page, which lists what still waits.
"use strict";

async function decideSet(main, choice, items) {
  lock();
  const base = "/approval/s/" + encodeURIComponent(main.dataset.id);
  const csrf = main.dataset.csrf;
  try {
    const body = { choice: choice, items: items };
    if (choice === "approve") {
      const options = await post(base + "/options", csrf, { items: items });
      if (!options.publicKey) { say(options.message || "The page cannot ask for a passkey now."); return null; }
      say("Waiting for your passkey...");
      const credential = await navigator.credentials.get({ publicKey: requestOptions(options.publicKey) });
      body.credential = credentialJSON(credential);
    }
    const answer = await post(base + "/decide", csrf, body);
    say(answer.message || "Done.");
    if (!answer.final) unlock();
    return answer;
  } catch (error) {
    say("No passkey answered (" + error.name + "). Nothing was approved; you can try again.");
    unlock();
    return null;
  }
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.querySelector('main[data-kind="changeset"]');
  if (!main) return;
  const items = (main.dataset.items || "").split(" ").filter((id) => id.length > 0);
  const approve = document.getElementById("approve-all");
  const deny = document.getElementById("deny-all");
  if (approve) approve.addEventListener("click", () => {
    if (!attentive()) { say("Read every call first, then press Approve again."); return; }
    decideSet(main, "approve", items);
  });
  if (deny) deny.addEventListener("click", () => decideSet(main, "deny", items));
  for (const button of document.querySelectorAll("button.deny-item")) {
    button.addEventListener("click", async () => {
      const answer = await decideSet(main, "deny", [button.dataset.id]);
      if (answer && answer.decided === "deny") window.location.reload();
    });
  }
});
