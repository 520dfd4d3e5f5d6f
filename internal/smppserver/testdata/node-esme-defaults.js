#!/usr/bin/env node
// An ESME on node-smpp (the npm package smpp 0.5.1) left at its defaults:
// no data_coding is given, so node-smpp picks one per text (1 for what
// fits GSM 03.38, written as GSM septets; 3 for Latin-1; 8 for the rest),
// as a customer's first script would. It binds as transceiver, submits N
// messages with registered_delivery 1 (window W, to numbers the test-mode
// simulator delivers), and waits for N DELIVRD receipts of the ids it was
// given. Prints a line "MSG <message_id> <JSON text>" per accepted submit,
// then one line starting OK: or FAIL:.
//   node node-esme-defaults.js N W   (env SMPP_HOST, SMPP_PORT, SMPP_SYSTEM_ID, SMPP_PASSWORD)
'use strict';
const smpp = require('smpp');
const N = parseInt(process.argv[2] || '40', 10);
const W = parseInt(process.argv[3] || '10', 10);
const url = `smpp://${process.env.SMPP_HOST || '127.0.0.1'}:${process.env.SMPP_PORT || '2775'}`;
const fail = (msg) => { console.log('FAIL: ' + msg); process.exit(1); };
setTimeout(() => fail('timeout'), 60000).unref();

// Texts that make node-smpp choose each of its codings.
const texts = [
  (i) => 'node-smpp defaults ' + i,           // data_coding 1
  (i) => 'a@b $5 under_score [x] {y} ~ ' + i, // data_coding 1, GSM septets and escapes
  (i) => 'Olá, até já ' + i,                  // data_coding 3 (á is not in GSM 03.38)
  (i) => 'Привет ✓ ' + i,                     // data_coding 8
];

const s = smpp.connect(url);
let sent = 0, inflight = 0, receipts = 0;
const ids = new Set(), seen = new Set();
s.on('error', (e) => fail('session: ' + e.message));
s.on('deliver_sm', (pdu) => {
  s.send(pdu.response());
  if (!(pdu.esm_class & 0x04)) return;
  const id = pdu.receipted_message_id;
  const text = typeof pdu.short_message === 'object' ? pdu.short_message.message : String(pdu.short_message);
  if (!/ stat:DELIVRD err:000 /.test(text)) fail('receipt text ' + text);
  if (seen.has(id)) fail('receipt twice for ' + id);
  seen.add(id);
  receipts++;
  if (receipts === N) {
    for (const i of seen) if (!ids.has(i)) fail('receipt of an unknown id ' + i);
    console.log(`OK: ${N} submit_sm at node-smpp's defaults, ${ids.size} ids, ${receipts} receipts`);
    s.unbind(() => { s.close(); process.exit(0); });
  }
});
const pump = () => {
  while (inflight < W && sent < N) {
    inflight++; sent++;
    const text = texts[sent % texts.length](sent);
    s.submit_sm({destination_addr: String(46701000000 + 10 * sent), registered_delivery: 1, short_message: text}, (pdu) => {
      inflight--;
      if (pdu.command_status !== 0) fail(`submit_sm_resp 0x${pdu.command_status.toString(16)} for ${JSON.stringify(text)}`);
      if (!/^msg_[0-9a-z]{26}$/.test(pdu.message_id)) fail('message_id ' + pdu.message_id);
      ids.add(pdu.message_id);
      console.log('MSG ' + pdu.message_id + ' ' + JSON.stringify(text));
      pump();
    });
  }
};
s.bind_transceiver({system_id: process.env.SMPP_SYSTEM_ID, password: process.env.SMPP_PASSWORD}, (pdu) => {
  if (pdu.command_status !== 0) fail('bind ' + pdu.command_status);
  pump();
});
