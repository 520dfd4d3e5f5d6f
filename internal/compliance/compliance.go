// Package compliance holds the rules that regulators and carriers impose on
// top of delivery (docs/compliance.md): recipients' opt-outs by STOP and
// START words, quiet hours in the recipient's local time, and the
// retention of personal data (erasing message text and keeping phone
// numbers only as a keyed hash). It decides; storage keeps the rows and
// the message service applies the rules on its paths. The functions the
// command line and the panel call (list, add and remove opt-outs; read and
// change an account's settings) are here too, so both share one place.
package compliance
