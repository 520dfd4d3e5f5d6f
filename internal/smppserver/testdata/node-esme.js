#!/usr/bin/env node
// An ESME on node-smpp (the npm package smpp, as the SMSC simulator in
// ../shared/peers/smsc-sim): a wrong password must be refused with
// ESME_RBINDFAIL; then it binds as transceiver, submits N messages with
// registered_delivery 1 (window W, every third in UCS-2, to numbers the
// test-mode simulator delivers), and waits for N
// DELIVRD receipts whose receipted_message_id is a message_id it was given.
// Prints one line starting OK: or FAIL:.
//   node node-esme.js N W   (env SMPP_HOST, SMPP_PORT, SMPP_SYSTEM_ID, SMPP_PASSWORD)
'use strict';
const smpp = require('smpp');
const N = parseInt(process.argv[2] || '100', 10);
const W = parseInt(process.argv[3] || '20', 10);
const url = `smpp://${process.env.SMPP_HOST || '127.0.0.1'}:${process.env.SMPP_PORT || '2775'}`;
const fail = (msg) => { console.log('FAIL: ' + msg); process.exit(1); };
setTimeout(() => fail('timeout'), 60000).unref();

const bad = smpp.connect(url);
bad.on('error', (e) => fail('bad session: ' + e.message));
bad.bind_transceiver({system_id: process.env.SMPP_SYSTEM_ID, password: 'wrongpw'}, (pdu) => {
  if (pdu.command_status !== 0x0D) fail('wrong password answered ' + pdu.command_status);
  bad.close();
  run();
});

function run() {
  const s = smpp.connect(url);
  let sent = 0, inflight = 0, receipts = 0;
  const ids = new Set(), seen = new Set();
  s.on('error', (e) => fail('session: ' + e.message));
  s.on('deliver_sm', (pdu) => {
    s.send(pdu.response());
    if (!(pdu.esm_class & 0x04)) return;
    const text = pdu.short_message.message;
    const id = pdu.receipted_message_id;
    if (!/^id:msg_[0-9a-z]{26} sub:001 dlvrd:001 submit date:\d{10} done date:\d{10} stat:DELIVRD err:000 text:/.test(text)) fail('receipt text ' + text);
    if (text.slice(3, 33) !== id) fail(`text id ${text.slice(3, 33)} is not receipted_message_id ${id}`);
    if (pdu.message_state !== 2) fail('message_state ' + pdu.message_state);
    if (seen.has(id)) fail('receipt twice for ' + id);
    seen.add(id);
    receipts++;
    if (receipts === N) {
      for (const i of seen) if (!ids.has(i)) fail('receipt of an unknown id ' + i);
      console.log(`OK: ${N} submit_sm, ${ids.size} ids, ${receipts} receipts`);
      s.unbind(() => { s.close(); process.exit(0); });
    }
  });
  const pump = () => {
    while (inflight < W && sent < N) {
      inflight++; sent++;
      const ucs2 = sent % 3 === 0;
      s.submit_sm({destination_addr: String(46701000000 + 10 * sent), registered_delivery: 1,
        short_message: ucs2 ? 'Olá ✓ ' + sent : 'node-smpp ' + sent, data_coding: ucs2 ? 8 : 0}, (pdu) => {
        inflight--;
        if (pdu.command_status !== 0) fail('submit_sm_resp ' + pdu.command_status);
        if (!/^msg_[0-9a-z]{26}$/.test(pdu.message_id)) fail('message_id ' + pdu.message_id);
        ids.add(pdu.message_id);
        pump();
      });
    }
  };
  s.bind_transceiver({system_id: process.env.SMPP_SYSTEM_ID, password: process.env.SMPP_PASSWORD}, (pdu) => {
    if (pdu.command_status !== 0) fail('bind ' + pdu.command_status);
    pump();
  });
}
