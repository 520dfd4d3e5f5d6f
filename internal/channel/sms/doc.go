// Package sms counts, encodes and splits SMS text the way an SMSC will bill
// it: GSM 03.38 (3GPP TS 23.038) default alphabet when every character fits,
// UCS-2 (UTF-16BE) otherwise.
//
// Counting rules (docs/api.md):
//   - GSM-7: 160 septets fit one segment, 153 per segment once concatenated
//     (the UDH takes the rest); extension-table characters (form feed,
//     ^ { } \ [ ~ ] | €) are sent as ESC + code and count two.
//   - UCS-2: 70 UTF-16 code units in one segment, 67 per concatenated part;
//     characters outside the BMP are surrogate pairs and count two.
//   - A single character that is not in the GSM default alphabet switches the
//     whole message to UCS-2. National language shift tables are not used,
//     because many carriers and handsets do not honour them.
//
// Invalid UTF-8 is tolerated rather than rejected: each byte that is not part
// of a valid sequence counts as one U+FFFD (so the message becomes UCS-2), and
// Split still cuts only between such bytes and whole runes, so the parts
// rejoin to the original bytes.
package sms
