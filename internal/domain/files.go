package domain

import "time"

// MediaFile is one account's right to use an uploaded file. The bytes are kept
// outside the database, named by SHA256.
type MediaFile struct {
	ID        string
	AccountID string
	SHA256    string
	MIME      string
	Size      int64
	Kind      string // image, video or document
	CreatedAt time.Time
}

// MessageTemplate is a registered WhatsApp message template of an account, named by Name
// and Language together.
type MessageTemplate struct {
	AccountID  string
	Name       string
	Language   string
	Category   string
	Status     string
	Body       string
	Parameters []string // one label per placeholder, in order
	CreatedAt  time.Time
}
