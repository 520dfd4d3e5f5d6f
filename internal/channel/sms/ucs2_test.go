package sms

import (
	"bytes"
	"testing"
)

func TestEncodeUCS2(t *testing.T) {
	tests := []struct {
		in   string
		want []byte
	}{
		{"", []byte{}},
		{"A", []byte{0x00, 0x41}},
		{"€", []byte{0x20, 0xAC}},
		{"ção", []byte{0x00, 0xE7, 0x00, 0xE3, 0x00, 0x6F}},
		{"Я", []byte{0x04, 0x2F}},
		{"中", []byte{0x4E, 0x2D}},
		{"😀", []byte{0xD8, 0x3D, 0xDE, 0x00}},
		{"𠀋", []byte{0xD8, 0x40, 0xDC, 0x0B}},
		{"a\xffb", []byte{0x00, 0x61, 0xFF, 0xFD, 0x00, 0x62}},
	}
	for _, tt := range tests {
		got := EncodeUCS2(tt.in)
		if !bytes.Equal(got, tt.want) {
			t.Errorf("EncodeUCS2(%q) = % X; want % X", tt.in, got, tt.want)
		}
	}
}

func TestDecodeUCS2(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, ""},
		{"latin", []byte{0x00, 0xE1, 0x00, 0x21}, "á!"},
		{"surrogate pair", []byte{0xD8, 0x3D, 0xDE, 0x00}, "😀"},
		{"lone high surrogate at end", []byte{0x00, 0x61, 0xD8, 0x3D}, "a\uFFFD"},
		{"high surrogate then BMP", []byte{0xD8, 0x3D, 0x00, 0x62}, "\uFFFDb"},
		{"lone low surrogate", []byte{0xDE, 0x00, 0x00, 0x63}, "\uFFFDc"},
		{"two high surrogates then low", []byte{0xD8, 0x3D, 0xD8, 0x3D, 0xDE, 0x00}, "\uFFFD😀"},
		{"odd length", []byte{0x00, 0x61, 0x00}, "a\uFFFD"},
	}
	for _, tt := range tests {
		if got := DecodeUCS2(tt.in); got != tt.want {
			t.Errorf("%s: DecodeUCS2(% X) = %q; want %q", tt.name, tt.in, got, tt.want)
		}
	}
}

// A sender's UCS-2 must be whole: even in length, every surrogate paired.
func TestCheckUCS2(t *testing.T) {
	good := [][]byte{{}, {0x00, 0x41}, {0xD8, 0x3D, 0xDE, 0x00}, {0x00, 0x41, 0xD8, 0x40, 0xDC, 0x0B}}
	bad := [][]byte{{0x00}, {0x00, 0x41, 0x00}, {0xD8, 0x3D}, {0xDE, 0x00}, {0xD8, 0x3D, 0x00, 0x41}, {0x00, 0x41, 0xDC, 0x0B, 0xD8, 0x40}}
	for _, b := range good {
		if err := CheckUCS2(b); err != nil {
			t.Errorf("CheckUCS2(% X): %v", b, err)
		}
	}
	for _, b := range bad {
		if err := CheckUCS2(b); err == nil {
			t.Errorf("CheckUCS2(% X) accepted", b)
		}
	}
}
