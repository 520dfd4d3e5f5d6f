package user

import "testing"

func TestPasswordRoundTrip(t *testing.T) {
	h, err := HashPassword("correct horse")
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := VerifyPassword(h, "correct horse"); !ok || err != nil {
		t.Fatalf("right password refused: %v", err)
	}
	if ok, _ := VerifyPassword(h, "wrong horse"); ok {
		t.Fatal("wrong password accepted")
	}
	if _, err := VerifyPassword("$bcrypt$x", "a"); err == nil {
		t.Fatal("unreadable hash accepted")
	}
}

func TestTokens(t *testing.T) {
	a, ha, err := NewToken()
	if err != nil {
		t.Fatal(err)
	}
	b, _, _ := NewToken()
	if a == b || TokenHash(a) != ha || len(a) < 40 {
		t.Fatal("tokens not unique or hash mismatch")
	}
}
